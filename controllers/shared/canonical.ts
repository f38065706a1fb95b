// JSON with the keys sorted at every level, for "would this write change anything?". What the API
// server returns has its keys sorted (custom resources pass through Go maps); what a controller builds
// has them in the order it wrote them. Plain JSON.stringify of the two always differed, so every look
// re-applied an unchanged status: a no-op write, with its admission review, per reconcile.
import { stringify } from 'safe-stable-stringify';

export function canonicalJSON(value: unknown): string {
  return stringify(value) ?? '';
}

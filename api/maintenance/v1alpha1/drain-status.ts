// ServerMaintenance status.drain: what the drain controller did in the tenant's workload cluster for
// this maintenance (which Node, whether it cordoned it, what still blocks). Written only by the drain
// controller (server-side apply, its field manager), next to its condition Drained.
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Int32, Time } from '../../schema/index.js';

export const DrainPhases = [
  // Announced, but the drain does not start before notBefore minus the policy's lead time.
  'Waiting',
  'Draining',
  'Drained',
  // The policy's drainTimeout passed with pods left: onTimeout Fail stops here (no approval).
  'TimedOut',
  // The policy's drainTimeout passed and onTimeout Proceed approved with pods left.
  'Proceeded',
  // No Node found for the claim, or its cluster's API could not be reached.
  'NodeNotFound',
  'Unreachable',
] as const;
export type DrainPhase = (typeof DrainPhases)[number];

export const DrainBlocker = Type.Object({
  pod: Type.String({ description: 'namespace/name of the pod that cannot be evicted (yet).' }),
  budget: Type.Optional(
    Type.String({ description: 'namespace/name of the PodDisruptionBudget refusing it.' }),
  ),
  message: Type.String({ maxLength: 1024, description: 'Why: the Eviction API answer, or the drain rule.' }),
  attempts: Type.Optional(Int32({ minimum: 0, description: 'Evictions refused so far.' })),
  since: Time({ description: 'First refusal.' }),
});
export type DrainBlocker = Static<typeof DrainBlocker>;

export const DrainStatus = Type.Object(
  {
    phase: StringEnum(DrainPhases),
    node: Type.Optional(Type.String({ description: 'The Node consuming the claim.' })),
    via: Type.Optional(
      Type.String({ description: 'How the Node was found: providerID, a CAPI Machine, an MCM Machine.' }),
    ),
    cordoned: Type.Optional(
      StringEnum(['ByUs', 'ByOthers'] as const, {
        description:
          'ByUs: we cordoned the Node and uncordon it afterwards; ByOthers: it was already cordoned.',
      }),
    ),
    startedAt: Type.Optional(
      Time({ description: 'When the drain started (the drainTimeout counts from here).' }),
    ),
    drainedAt: Type.Optional(Time()),
    podsLeft: Type.Optional(Int32({ minimum: 0, description: 'Pods still to leave the Node.' })),
    blockers: Type.Optional(Type.Array(DrainBlocker, { maxItems: 32 })),
    message: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  {
    description:
      "The drain of the claim's Node in its workload cluster; written only by the drain controller.",
  },
);
export type DrainStatus = Static<typeof DrainStatus>;

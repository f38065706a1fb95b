// metav1.LabelSelector matching, as the API server does it. An empty selector matches everything
// (our budgets document that), a missing one too.
import type { LabelSelector } from '../api/schema/common.js';

type Requirement = NonNullable<LabelSelector['matchExpressions']>[number];

function meets(req: Requirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, req.key);
  const listed = has && (req.values ?? []).includes(labels[req.key]!);
  switch (req.operator) {
    case 'In':
      return listed;
    case 'NotIn':
      return !listed;
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      return false; // an operator we do not know selects nothing (fail closed)
  }
}

export function matchesSelector(
  selector: LabelSelector | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (!selector) return true;
  const l = labels ?? {};
  return (
    Object.entries(selector.matchLabels ?? {}).every(([k, v]) => l[k] === v) &&
    (selector.matchExpressions ?? []).every((req) => meets(req, l))
  );
}

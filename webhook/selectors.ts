// metav1.LabelSelector matching, as the API server does it. An empty selector matches everything
// (our budgets document that), a missing one too.
import type { LabelSelector } from '../api/schema/common.js';

export function matchesSelector(
  selector: LabelSelector | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (!selector) return true;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (l[k] !== v) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!has || !values.includes(l[req.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[req.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false; // an operator we do not know selects nothing (fail closed)
    }
  }
  return true;
}

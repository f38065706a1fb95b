// The one edit every releaser makes to a disruption budget's grant ledger: drop some entries, keep the
// rest in their order, and tell which went. Its writers (the webhook undoing a reservation a later
// budget refused, the maintenance controller releasing a finished maintenance's grant, the budget
// controller expiring grants past their TTL) each write it through compareAndSwap (cas.ts).

interface Grant {
  maintenanceUID: string;
}

interface Ledgered<G extends Grant> {
  status?: { grants?: G[] };
}

/**
 * The budget without the grants `drop` picks, as a new object (the input is left as it was), and the
 * grants dropped. `next` is undefined when `drop` picks none: there is nothing to write.
 */
export function withoutGrants<G extends Grant, B extends Ledgered<G>>(
  budget: B,
  drop: (grant: G) => boolean,
): { next?: B; dropped: G[] } {
  // One pass: `drop` may build a key per grant (the budget controller's does), and ledgers run to 2,000.
  const dropped: G[] = [];
  const kept: G[] = [];
  for (const g of budget.status?.grants ?? []) (drop(g) ? dropped : kept).push(g);
  if (dropped.length === 0) return { dropped };
  return { next: { ...budget, status: { ...budget.status, grants: kept } }, dropped };
}

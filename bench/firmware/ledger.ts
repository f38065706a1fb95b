// What the simulator's exactly-once counters say about a rollout: a flash applied twice (or an update
// task started twice) is a double apply; a target the rollout never flashed is a miss. Pure.
import type { ServerLedger } from '../../e2e/sim/bmc/ledger.js';

export interface ApplyCount {
  /** Servers whose BIOS, and BMCs whose firmware, were updated more than once. */
  doubleApplies: number;
  /** Servers / BMCs not updated at all (the rollout is incomplete). */
  missed: number;
  /** Every update task started and every image that became active. */
  biosFlashes: number;
  bmcFlashes: number;
}

/** `bios` / `bmc`: whether that rollout ran, so a target should show exactly one update. */
export function countApplies(
  ledger: readonly ServerLedger[],
  o: { bios: boolean; bmc: boolean },
): ApplyCount {
  const out: ApplyCount = { doubleApplies: 0, missed: 0, biosFlashes: 0, bmcFlashes: 0 };
  const judge = (started: number, flashed: number) => {
    if (started > 1 || flashed > 1) out.doubleApplies++;
    else if (flashed === 0) out.missed++;
  };
  const seenBmc = new Set<number>();
  for (const l of ledger) {
    out.biosFlashes += l.biosFlashes;
    if (o.bios) judge(l.biosUpdatesStarted, l.biosFlashes);
    // Every server of a BMC carries that BMC's counters: count each BMC once.
    if (seenBmc.has(l.bmc)) continue;
    seenBmc.add(l.bmc);
    out.bmcFlashes += l.bmcLedger.bmcFlashes;
    if (o.bmc) judge(l.bmcLedger.bmcUpdatesStarted, l.bmcLedger.bmcFlashes);
  }
  return out;
}

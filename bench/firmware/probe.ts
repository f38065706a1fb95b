// What the benchmark reads from running processes and from its watch.
import { readFileSync } from 'node:fs';
import { OWNER_LABEL } from '../../controllers/firmware/model.js';
import type { FleetWatch } from '../../e2e/demo/watch.js';
import { partialGangs } from './report.js';

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Maintenances the watch saw end. */
export const ended = (w: FleetWatch) =>
  [...w.records.values()].filter((r) => r.deletedAt !== undefined).length;

/** BMC gangs the watch sees admitted in part (see partialGangs). */
export function gangsOf(w: FleetWatch): { gangs: number; slotsHeld: number } {
  return partialGangs(
    w.maintenances.list().map((m) => ({
      owner: m.metadata.labels?.[OWNER_LABEL],
      bmcScoped: m.metadata.name!.startsWith('bmcv-'),
      inMaintenance: m.status?.state === 'InMaintenance',
    })),
  );
}

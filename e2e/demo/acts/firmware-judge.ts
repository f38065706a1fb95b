// Act 6's pure parts: which servers the rollout targets, the Set's line on screen, and what the
// act concludes from the Set, its children and the simulator's ledger (rows for the summary, and
// the problems that make the demo exit 1).
import type { KubeObject } from '../../../api/schema/meta.js';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import { RACK_LABEL } from '../../sim/fleet/decisions.js';

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** A firmware object or Set as the demo reads it. */
export type FirmwareObject = KubeObject & {
  spec: { serverRef?: { name?: string }; bmcRef?: { name?: string }; [k: string]: unknown };
  status?: { state?: string; conditions?: Condition[]; [k: string]: unknown };
};

export const conditionOf = (o: FirmwareObject | undefined, type: string): Condition | undefined =>
  o?.status?.conditions?.find((c) => c.type === type);

/** The first `perRack` servers of every rack, by name: a wave that crosses all racks. */
export function rolloutTargets(servers: readonly Server[], perRack: number): string[] {
  const byRack = new Map<string, string[]>();
  for (const s of servers) {
    const rack = s.metadata.labels?.[RACK_LABEL] ?? '';
    byRack.set(rack, [...(byRack.get(rack) ?? []), s.metadata.name!]);
  }
  return [...byRack.keys()].sort().flatMap((r) => byRack.get(r)!.sort().slice(0, perRack));
}

export const targetOf = (c: FirmwareObject) => c.spec.serverRef?.name ?? c.spec.bmcRef?.name ?? '';

/** Children by what they show: done, in flight, failed, held by the Set (annotation), waiting. */
export function tally(children: readonly FirmwareObject[], holdAnnotation: string) {
  const state = (c: FirmwareObject) => c.status?.state ?? 'Pending';
  return {
    completed: children.filter((c) => state(c) === 'Completed').length,
    inProgress: children.filter((c) => state(c) === 'InProgress').length,
    failed: children
      .filter((c) => state(c) === 'Failed')
      .map(targetOf)
      .sort(),
    held: children.filter((c) => state(c) === 'Pending' && c.metadata.annotations?.[holdAnnotation]).length,
  };
}

/** The Set's line in the live frame. */
export function setLine(
  name: string,
  set: FirmwareObject | undefined,
  children: readonly FirmwareObject[],
  total: number,
  holdAnnotation: string,
  bar: (done: number, total: number) => string,
): string {
  const t = tally(children, holdAnnotation);
  const sc = conditionOf(set, 'ShortCircuited');
  const failed = t.failed.length ? `  failed ${t.failed.length} (${t.failed.join(', ')})` : '';
  const short = sc?.status === 'True' ? `  ShortCircuited (${sc.reason})` : '';
  return `${name} ${bar(t.completed, total)}  in flight ${t.inProgress}${failed}  held ${t.held}${short}`;
}

export interface FirmwareFacts {
  set: string;
  version: string;
  targets: readonly string[];
  /** The server whose flash the simulator failed. */
  failing: string;
  children: readonly FirmwareObject[];
  /** The ShortCircuited condition as it was when the rollout stopped, and how many were held then. */
  shortCircuit: Condition | undefined;
  heldAtShortCircuit: number;
  /** The Set's ShortCircuited condition after maxFailures was raised. */
  cleared: Condition | undefined;
  /** Per target: BIOS version and flashes in the simulator's ledger. */
  ledger: ReadonlyMap<string, { version: string; flashes: number }>;
}

/** What went other than the act says it goes; each check could fail on a run that went wrong. */
export function firmwareProblems(f: FirmwareFacts): string[] {
  const problems: string[] = [];
  const byTarget = new Map(f.children.map((c) => [targetOf(c), c]));
  const failedState = byTarget.get(f.failing)?.status?.state;
  if (failedState !== 'Failed')
    problems.push(`firmware: ${f.failing}'s child is ${failedState ?? 'missing'}, not Failed`);
  if (f.shortCircuit?.status !== 'True' || f.shortCircuit.reason !== 'TooManyFailures')
    problems.push(`firmware: the Set did not short-circuit (${JSON.stringify(f.shortCircuit)})`);
  if (f.heldAtShortCircuit === 0) problems.push('firmware: the short-circuit held no child back');
  if (f.cleared?.status !== 'False')
    problems.push('firmware: raising maxFailures did not lift the short-circuit');
  const wrong = notFlashed(f, byTarget);
  if (wrong.length) problems.push(`firmware: not at ${f.version} with one flash: ${wrong.join(', ')}`);
  if (f.ledger.get(f.failing)?.version === f.version)
    problems.push(`firmware: ${f.failing} reached ${f.version} although its flash failed`);
  return problems;
}

/** Targets (but the failing one) not Completed at the version with exactly one flash. */
function notFlashed(f: FirmwareFacts, byTarget: ReadonlyMap<string, FirmwareObject>): string[] {
  return f.targets.filter((t) => {
    if (t === f.failing) return false;
    const l = f.ledger.get(t);
    return byTarget.get(t)?.status?.state !== 'Completed' || l?.version !== f.version || l.flashes !== 1;
  });
}

/** The summary's rows and the problems. */
export function judgeFirmware(f: FirmwareFacts): { rows: [string, string][]; problems: string[] } {
  const failedChild = f.children.find((c) => targetOf(c) === f.failing);
  const failedReason = conditionOf(failedChild, 'Failed')?.reason ?? failedChild?.status?.state ?? 'none';
  const flashed =
    f.targets.length - 1 - notFlashed(f, new Map(f.children.map((c) => [targetOf(c), c]))).length;
  const sc = f.shortCircuit;
  return {
    rows: [
      [
        'firmware',
        `BIOSVersionSet ${f.set}: ${flashed} of ${f.targets.length} servers at ${f.version} (one flash each); ${f.failing} Failed (${failedReason}), still at ${f.ledger.get(f.failing)?.version ?? '?'}, not retried`,
      ],
      [
        '',
        `ShortCircuited=${sc?.status ?? '?'} (${sc?.reason ?? '?'}): ${sc?.message ?? ''}; ${f.heldAtShortCircuit} held until maxFailures was raised to 1`,
      ],
    ],
    problems: firmwareProblems(f),
  };
}

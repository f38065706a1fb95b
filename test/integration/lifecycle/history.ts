// What the lifecycle suites read off a run: the watch history of maintenance states (pure analysis
// of who held which server, the peak, the start order) and samples of a binary's Prometheus text.

export interface StateRecord {
  at: number;
  uid: string;
  name: string;
  server: string;
  state: string;
  deleted: boolean;
}

/** The servers that had more than one maintenance InMaintenance at once, from the watch history. */
export function overlaps(history: readonly StateRecord[]): string[] {
  const holding = new Map<string, Set<string>>();
  const bad = new Set<string>();
  for (const r of history) {
    const set = holding.get(r.server) ?? new Set<string>();
    holding.set(r.server, set);
    if (r.state === 'InMaintenance' && !r.deleted) set.add(r.uid);
    else set.delete(r.uid);
    if (set.size > 1) bad.add(r.server);
  }
  return [...bad];
}

/** The most maintenances InMaintenance at once among `servers`, from the watch history. */
export function peakInMaintenance(history: readonly StateRecord[], servers?: ReadonlySet<string>): number {
  const inside = new Set<string>();
  let peak = 0;
  for (const r of history) {
    if (servers && !servers.has(r.server)) continue;
    if (r.state === 'InMaintenance' && !r.deleted) inside.add(r.uid);
    else inside.delete(r.uid);
    peak = Math.max(peak, inside.size);
  }
  return peak;
}

/** Order in which maintenances first reached InMaintenance (names). */
export function startOrder(history: readonly StateRecord[], names?: ReadonlySet<string>): string[] {
  const seen: string[] = [];
  for (const r of history)
    if (r.state === 'InMaintenance' && !seen.includes(r.name) && (!names || names.has(r.name)))
      seen.push(r.name);
  return seen;
}

/** The value of one sample (`name{labels}`) in Prometheus text, or undefined. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

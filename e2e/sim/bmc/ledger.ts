// SIMULATOR the exactly-once ledger: per server, how often its BIOS and its BMC were flashed and
// their settings written. Tests of "every flash and every settings write happened exactly once"
// read this (in process through `sim.ledger()`, or `GET /sim/ledger`).
import type { HostLedger } from './host.js';
import type { BmcLedger, SimBmc } from './model.js';

export interface SimServer {
  /** Index of the BMC (its endpoint is `<url>/bmc/<bmc>`). */
  bmc: number;
  /** Id of the server's ComputerSystem behind that BMC. */
  system: string;
  endpoint: string;
}

/** One server: its own counters, and those of the BMC it sits behind (shared with its siblings). */
export interface ServerLedger extends HostLedger {
  bmc: number;
  system: string;
  biosVersion: string;
  bmcVersion: string;
  /** The BMC's counters: BMC work counts once per BMC, not once per server. */
  bmcLedger: BmcLedger;
}

export function ledgerOf(bmcs: readonly SimBmc[]): ServerLedger[] {
  return bmcs.flatMap((b) =>
    b.hosts.map((h) => ({
      bmc: b.index,
      system: h.systemId,
      biosVersion: h.biosVersion,
      bmcVersion: b.firmware.BMC,
      ...h.ledger,
      bmcLedger: { ...b.ledger },
    })),
  );
}

/**
 * Systems per BMC that put `servers` servers behind `bmcs` BMCs as evenly as possible (1,000
 * behind 400: 200 BMCs with three, 200 with two), for the `systems` option.
 */
export function spread(servers: number, bmcs: number): (index: number) => number {
  const base = Math.floor(servers / bmcs);
  const extra = servers % bmcs;
  return (i) => base + (i < extra ? 1 : 0);
}

// What every act works with: the demo's options and progress, the admin's client, the watch of the
// cluster, and the demo's ways to log, wait and run kubectl metal. Built once by scenario.ts.
import type { KubeClient } from '../../../lib/kube/client.js';
import type { Painter } from '../../../cli/output.js';
import type { FleetWatch } from '../watch.js';
import type { DemoOptions } from '../config.js';
import type { DemoProgress } from '../report.js';
import type { Stack } from '../stack.js';
import type { Hardware } from '../hardware.js';

/** Ctrl-C (the demo's signal) while an act waits. */
export class Aborted extends Error {}

export interface ActContext {
  readonly o: DemoOptions;
  readonly p: Painter;
  readonly s: DemoProgress;
  readonly admin: KubeClient;
  readonly watch: FleetWatch;
  readonly stack: Stack;
  /** The simulated BMCs (acts 6 and 7 only). */
  readonly hardware: Hardware | undefined;
  log(line: string): void;
  /** A command an actor runs, shown as such. */
  say(command: string): void;
  /** Polls `probe` until it returns a value; times out with `what` in the message. */
  until<T>(what: string, probe: () => T | undefined | false, timeoutMs: number): Promise<T>;
  pause(ms: number): Promise<void>;
  beginAct(n: number, title: string): void;
  /** kubectl metal, in-process, as the identity of `kubeconfig`; its output is logged. */
  kubectlMetal(kubeconfig: string, args: string[]): Promise<void>;
  /** As until, for a probe that reads the API (every 500 ms). */
  poll<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs: number): Promise<T>;
}

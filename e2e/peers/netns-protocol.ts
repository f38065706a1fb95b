// What netns.ts (host side) and netns-agent.ts (inside the namespace) agree on: the config file and
// where each bridged port's Unix socket lives.
import { join } from 'node:path';

export interface AgentConfig {
  /** Directory of the Unix sockets (shared by both sides through the filesystem). */
  dir: string;
  /** Host loopback ports reachable inside the namespace at the same 127.0.0.1 port. */
  inbound: number[];
  /** Namespace loopback ports the host reaches through a port of its own. */
  outbound: number[];
  command: string;
  args: string[];
  env: Record<string, string>;
}

export const inSocket = (dir: string, port: number) => join(dir, `in-${port}.sock`);
export const outSocket = (dir: string, port: number) => join(dir, `out-${port}.sock`);

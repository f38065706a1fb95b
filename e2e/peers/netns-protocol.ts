// What netns.ts (host side) and netns-agent.ts (inside the namespace) share: the config file, where
// each bridged port's Unix socket lives, and how a bridge joins two sockets.
import type { Server, Socket } from 'node:net';
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

/** Joins two sockets both ways; either side closing or failing closes the other. */
export function pipe(a: Socket, b: Socket): void {
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

/** Listens on a TCP port of an address, or on a Unix socket path. */
export function listen(server: Server, ...args: [number, string] | [string]): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(...(args as [number, string]), () => resolve());
  });
}

// Runs inside the network namespace that netns.ts makes (`unshare --net`, only loopback): bridges the
// listed host ports in and the listed namespace ports out through Unix sockets (the filesystem is
// shared, the network is not), then runs the command and exits with it.
//
//   node --import tsx netns-agent.ts CONFIG.json
//
// stdout carries one JSON line per event for netns.ts ({"event":"ready","pid":N}, {"event":"exit"});
// the command's stdout and stderr go to this process's stderr.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { inSocket, listen, outSocket, pipe, type AgentConfig } from './netns-protocol.js';

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as AgentConfig;
const say = (msg: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(msg)}\n`);

const servers: Server[] = [];
// Host port P is 127.0.0.1:P in here too, so addresses (a kubeconfig, a BMC) need no rewriting.
for (const port of config.inbound) {
  const s = createServer((c) => pipe(c, createConnection(inSocket(config.dir, port))));
  await listen(s, port, '127.0.0.1');
  servers.push(s);
}
for (const port of config.outbound) {
  const s = createServer((c) => pipe(c, createConnection({ host: '127.0.0.1', port })));
  await listen(s, outSocket(config.dir, port));
  servers.push(s);
}

const child = spawn(config.command, config.args, {
  env: { ...process.env, ...config.env },
  stdio: ['ignore', 'pipe', 'pipe'],
});
child.stdout.pipe(process.stderr);
child.stderr.pipe(process.stderr);
say({ event: 'ready', pid: child.pid });
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  say({ event: 'exit', code, signal });
  for (const s of servers) s.close();
  process.exit(code ?? 128);
});

// The demo's choreography as a process (scripts/demo.sh starts the control plane and runs this):
//
//   tsx e2e/demo/main.ts --kubeconfig DIR/kubeconfig [--servers 50 --racks 5 --tenants 4]
//
// Ctrl-C (SIGINT) or SIGTERM stops the current act, stops everything this process started and exits
// 130; the launcher then stops the control plane. Exit 0 when every act completed and every check held.
import { Command } from 'commander';
import { Demo } from './scenario.js';

const int = (v: string) => Number.parseInt(v, 10);
const o = new Command('demo')
  .requiredOption('--kubeconfig <path>', 'admin kubeconfig of the control plane')
  .option('--servers <n>', 'servers', int, 50)
  .option('--racks <n>', 'racks', int, 5)
  .option('--tenants <n>', 'tenants', int, 4)
  .option('--webhook-replicas <n>', 'webhook replicas (0: none)', int, 2)
  .parse()
  .opts<{ kubeconfig: string; servers: number; racks: number; tenants: number; webhookReplicas: number }>();

const abort = new AbortController();
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    if (interrupted) return; // a second Ctrl-C while stopping: the launcher's trap takes over
    interrupted = true;
    process.stderr.write(`\n${sig}: stopping the demo…\n`);
    abort.abort();
  });

const demo = new Demo({ ...o, signal: abort.signal });
const result = await demo.run();
for (const line of result.lines) console.log(line);
process.exit(interrupted ? 130 : result.ok ? 0 : 1);

// The demo's choreography as a process (scripts/demo.sh makes its directory and runs this):
//
//   tsx e2e/demo/main.ts --dir DIR [--servers 50 --racks 5 --tenants 4] [--keep]
//
// The options are checked before anything starts (--help and a usage error start nothing). Then a
// control plane in DIR, the system, the acts. SIGINT or SIGTERM stops the current act (or ends
// --keep), stops everything this process started, each once, and exits 130; the launcher then
// removes DIR. Exit 0 when every act completed and every check held.
import { Command, InvalidArgumentError, Option } from 'commander';
import { join } from 'node:path';
import { controlPlaneUp, installCRDs } from '../harness/control-plane.js';
import { KubeClient } from '../../lib/kube/client.js';
import { Demo } from './scenario.js';
import { ANNOUNCE_MIN_CLAIMS, ANNOUNCE_MIN_TENANTS } from './announce-plan.js';
import { ACTS, CLAIMED_SHARE } from './config.js';

const count = (min: number) => (v: string) => {
  if (!/^\d+$/.test(v.trim())) throw new InvalidArgumentError(`"${v}" is not a whole number.`);
  const n = Number(v);
  if (n < min) throw new InvalidArgumentError(`must be at least ${min}, got ${n}.`);
  return n;
};
const program = new Command('scripts/demo.sh')
  .description('Runs the whole system locally and plays a maintenance scenario against it (docs/demo.md).')
  .addOption(new Option('--dir <path>', 'the demo directory (scripts/demo.sh makes it)').hideHelp())
  .option('--servers <n>', 'servers in the fleet (at least 6)', count(6), 50)
  .option('--racks <n>', 'racks the servers are spread over (at least 1)', count(1), 5)
  .option('--tenants <n>', 'tenant namespaces (at least 1)', count(1), 4)
  .option('--webhook-replicas <n>', 'webhook replicas (0: none)', count(0), 2)
  .option('--acts <list>', 'acts to play, e.g. 1,2,5 (default: all); 3 and 5 need 2', '1,2,3,4,5,6,7')
  .option('--keep', 'keep the system running after the acts, until Ctrl-C, to explore it', false)
  // Every usage error exits 2 (commander's own, such as --servers abc, would exit 1); --help exits 0.
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
program.parse();
const o = program.opts<{
  dir?: string;
  servers: number;
  racks: number;
  tenants: number;
  webhookReplicas: number;
  acts: string;
  keep: boolean;
}>();
const acts = new Set(o.acts.split(',').map((a) => Number(a.trim())));
const usage = (message: string) => program.error(`error: ${message}`, { exitCode: 2 });
if (!o.dir) usage('--dir is required (run scripts/demo.sh, which makes the directory)');
if ([...acts].some((a) => !Number.isInteger(a) || a < 1 || a > ACTS))
  usage(`--acts "${o.acts}": acts are 1 to ${ACTS}`);
if (!acts.has(1)) usage('--acts must include 1: the fleet has to come up first');
if ((acts.has(3) || acts.has(5)) && !acts.has(2))
  usage('--acts 3 and 5 use the server act 2 cordons: include 2');
if (o.racks > o.servers) usage(`--racks ${o.racks} is more than --servers ${o.servers}`);
const claimsPerTenant = Math.floor((o.servers * CLAIMED_SHARE) / o.tenants);
if (claimsPerTenant < 1) usage(`--tenants ${o.tenants} leaves no claim per tenant for ${o.servers} servers`);
if (acts.has(3) && o.tenants < ANNOUNCE_MIN_TENANTS)
  usage(`--acts 3 needs --tenants ${ANNOUNCE_MIN_TENANTS} or more: one approves by hand, one standing`);
if (acts.has(3) && claimsPerTenant * o.tenants < ANNOUNCE_MIN_CLAIMS)
  usage(
    `--acts 3 needs ${ANNOUNCE_MIN_CLAIMS} claimed servers; --servers ${o.servers} gives ${claimsPerTenant * o.tenants}`,
  );

const abort = new AbortController();
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    if (interrupted) return; // a second signal while stopping: the launcher's cleanup takes over
    interrupted = true;
    process.stderr.write(`\n${sig}: stopping the demo…\n`);
    abort.abort();
  });

const dir = o.dir!;
process.stderr.write(`demo: everything goes under ${dir} (removed at the end)\n`);
process.stderr.write(`demo: starting a control plane (kube-apiserver + etcd)…\n`);
const cp = await controlPlaneUp(dir);
const client = await KubeClient.fromFile(cp.kubeconfig);
try {
  await installCRDs(client);
} finally {
  await client.close();
}
const demo = new Demo({
  kubeconfig: cp.kubeconfig,
  servers: o.servers,
  racks: o.racks,
  tenants: o.tenants,
  webhookReplicas: o.webhookReplicas,
  acts,
  keep: o.keep,
  logDir: process.env.METAL_TEST_LOG_DIR ?? join(dir, 'logs'),
  controlPlaneDir: dir,
  signal: abort.signal,
});
const result = await demo.run();
for (const line of result.lines) console.log(line);
process.exit(interrupted && !result.kept ? 130 : result.ok ? 0 : 1);

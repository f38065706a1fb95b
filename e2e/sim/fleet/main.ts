// The fleet simulator as a process:
//
//   tsx e2e/sim/fleet/main.ts --admin-kubeconfig DIR/kubeconfig --servers 50 --racks 5 --tenants 4
//
// Seeds the fleet (servers in racks, tenant namespaces and claims, budgets) with the admin identity,
// then runs as the fleet-simulator ServiceAccount (e2e/sim/fleet/rbac.yaml) until SIGINT/SIGTERM.
// With --kubeconfig it runs as that identity instead; --no-seed only simulates what exists.
// Logs are pino JSON lines on stdout. A SIMULATOR: never part of the product.
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { KubeClient } from '../../../lib/kube/client.js';
import { runUntilSignal } from '../../../lib/kube/lifecycle.js';
import { createLogger } from '../../../lib/log.js';
import { parseDuration } from '../../../policies/validate.js';
import { kubeconfigForBinary } from '../../harness/processes.js';
import { FleetSimulator } from './simulator.js';
import { planFleet, seedFleet, type ClaimMode } from './fleet.js';
import type { ActorStart } from './decisions.js';

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`expected a non-negative integer, got ${v}`);
  return n;
};
const duration = (v: string) => {
  const ms = parseDuration(v);
  if (ms === undefined) throw new Error(`expected a duration such as 500ms, 5s or 2m, got ${v}`);
  return ms;
};
const intOrPercent = (v: string) => (/^\d+%$/.test(v) ? v : int(v));

const cmd = new Command('fleet-simulator')
  .description('Simulates what metal-operator does for a fleet of servers (tests, benchmarks, demo only)')
  .option(
    '--kubeconfig <path>',
    'identity to simulate as (default: the fleet-simulator ServiceAccount, set up with --admin-kubeconfig)',
  )
  .option(
    '--admin-kubeconfig <path>',
    'admin identity: seeds the fleet and sets up the fleet-simulator ServiceAccount',
  )
  .option('--fleet <name>', 'fleet name (label value on everything seeded)', 'fleet')
  .option('--prefix <text>', 'prefix of server and tenant namespace names', '')
  .option('--servers <n>', 'servers to seed', int, 50)
  .option('--racks <n>', 'racks the servers are spread over', int, 5)
  .option('--tenants <n>', 'tenant namespaces', int, 4)
  .option('--claims-per-tenant <n>', 'claims per tenant (default: 80% of the servers in total)', int)
  .addOption(
    new Option('--claim-mode <mode>', 'how claims pick servers')
      .choices(['any', 'rack', 'serverRef'])
      .default('any'),
  )
  .option('--prebound', 'create servers and claims already bound (fast, for large fleets)')
  .option('--fleet-budget <n|%>', 'ServerDisruptionBudget over the fleet', intOrPercent)
  .option('--rack-budget <n|%>', 'ServerDisruptionBudget per rack', intOrPercent)
  .option('--tenant-budget <n|%>', 'ServerClaimDisruptionBudget per tenant', intOrPercent)
  .option('--selector <labels>', 'simulate only servers and claims with these labels (default: all)')
  .option('--no-seed', 'do not create anything; only simulate')
  .option('--hold <duration>', 'actor: delete a maintenance this long after it is InMaintenance', duration)
  .addOption(
    new Option('--actor-start <when>', 'actor: start the hold at Ready=True or at InMaintenance')
      .choices(['Ready', 'InMaintenance'])
      .default('Ready'),
  )
  .option('--discovery <duration>', 'time in Initial and in Discovery', duration, 300)
  .option('--power <duration>', 'time a power transition takes', duration, 200)
  .option('--log-level <level>', 'log level', process.env.LOG_LEVEL ?? 'info');
cmd.parse();
const o = cmd.opts<{
  kubeconfig?: string;
  adminKubeconfig?: string;
  fleet: string;
  prefix: string;
  servers: number;
  racks: number;
  tenants: number;
  claimsPerTenant?: number;
  claimMode: ClaimMode;
  prebound?: boolean;
  fleetBudget?: number | string;
  rackBudget?: number | string;
  tenantBudget?: number | string;
  seed: boolean;
  selector?: string;
  hold?: number;
  actorStart: ActorStart;
  discovery: number;
  power: number;
  logLevel: string;
}>();

const logger = createLogger('fleet-simulator', { level: o.logLevel });
if (!o.kubeconfig && !o.adminKubeconfig) {
  logger.fatal('give --kubeconfig (the identity to run as) or --admin-kubeconfig (to set one up)');
  process.exit(2);
}

let simKubeconfig = o.kubeconfig;
if (o.adminKubeconfig) {
  const admin = await KubeClient.fromFile(o.adminKubeconfig);
  try {
    if (o.seed) {
      const plan = planFleet({
        name: o.fleet,
        prefix: o.prefix,
        servers: o.servers,
        racks: o.racks,
        tenants: o.tenants,
        claimsPerTenant: o.claimsPerTenant,
        claimMode: o.claimMode,
        prebound: o.prebound,
        fleetBudget: o.fleetBudget,
        rackBudget: o.rackBudget,
        tenantBudget: o.tenantBudget,
      });
      const started = Date.now();
      await seedFleet(admin, plan, { concurrency: 16 });
      logger.info(
        {
          servers: plan.servers.length,
          claims: plan.claims.length,
          tenants: plan.namespaces.length,
          ms: Date.now() - started,
        },
        'fleet seeded',
      );
    }
    simKubeconfig ??= (
      await kubeconfigForBinary(admin, 'fleet-simulator', join(import.meta.dirname, 'rbac.yaml'))
    ).kubeconfig;
  } finally {
    await admin.close();
  }
}

const client = await KubeClient.fromFile(simKubeconfig!, { userAgent: 'metal-maintenance/fleet-simulator' });
const sim = new FleetSimulator({
  client,
  logger,
  timings: { discoveryMs: o.discovery, powerMs: o.power },
  labelSelector: o.selector,
  actor: o.hold !== undefined ? { holdMs: o.hold, startOn: o.actorStart } : undefined,
});
runUntilSignal(
  {
    stop: async () => {
      await sim.stop();
      logger.info({ stats: sim.stats }, 'fleet simulator stopped');
    },
  },
  logger,
);
await sim.start();
logger.info(
  { servers: sim.servers.size, claims: sim.claims.size, actor: o.hold !== undefined },
  'fleet simulator started',
);

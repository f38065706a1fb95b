// kubectl-metal: the kubectl plugin for the maintenance contract (`kubectl metal <command>` once
// `kubectl-metal` is on PATH; see docs/cli.md).
//
//   migrate [--apply] [--delete-legacy [--remove-legacy-finalizer]] [-n NS]
//                                                  legacy ServerMaintenances and labels -> typed objects
//   cordon|uncordon SERVER...                      spec.unclaimable (IEP-22)
//   approve CLAIM [MAINTENANCE...] [--all] -n NS   typed approvals scoped to a maintenance uid
//   defer CLAIM MAINTENANCE --until T -n NS        start no earlier than T (within the deadline)
//   status [-n NS]                                 maintenances, budgets and the fleet at a glance
import { Command, Option } from 'commander';
import { MetalError, errorMessage } from '../lib/errors.js';
import { KubeApiError } from '../lib/kube/errors.js';
import { updateWithRetry } from '../lib/kube/status-writer.js';
import { api, connect, listAllOrNone, listVisible, type Api, type ConnectionFlags } from './kube.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import {
  FIRMWARE_HEAD,
  FIRMWARE_SET_HEAD,
  firmwareRows,
  firmwareSetRows,
  type FirmwareObjects,
} from './firmware-status.js';
import { runMigrate } from './migrate-run.js';
import {
  CliErrors,
  findAnnouncement,
  parseUntil,
  selectToApprove,
  withApprovals,
  withDeferral,
  withUnclaimable,
} from './claims.js';
import {
  BUDGET_HEAD,
  MAINTENANCE_HEAD,
  budgetRows,
  fleetSummary,
  maintenanceRows,
  summaryLine,
} from './status.js';
import { painter, table, wantsColor, type Painter } from './output.js';
import { pipelineStatusLines } from './pipeline.js';

interface GlobalFlags extends ConnectionFlags {
  namespace?: string;
  color?: boolean;
}

export interface CliIO {
  out: (text: string) => void;
  err: (text: string) => void;
}

const defaultIO: CliIO = {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`),
};

async function withApi<T>(flags: GlobalFlags, fn: (a: Api) => Promise<T>): Promise<T> {
  const client = await connect(flags);
  try {
    return await fn(api(client));
  } finally {
    await client.close();
  }
}

function claimRef(flags: GlobalFlags, claim: string): { name: string; namespace: string } {
  return { name: claim, namespace: flags.namespace ?? 'default' };
}

async function cordon(a: Api, names: string[], unclaimable: boolean, dryRun: boolean, io: CliIO, p: Painter) {
  for (const name of names) {
    const server = await a.servers.get(name);
    const verb = unclaimable ? 'cordoned' : 'uncordoned';
    if (!withUnclaimable(server, unclaimable)) {
      io.out(`server/${name} already ${verb}`);
      continue;
    }
    // A merge patch of one field: never a binding write, so the placement guard always admits it.
    await a.servers.patch(name, { spec: { unclaimable } }, { dryRun });
    io.out(p.green(`server/${name} ${verb}${dryRun ? ' (server dry run)' : ''}`));
  }
}

async function approve(
  a: Api,
  flags: GlobalFlags,
  claim: string,
  refs: string[],
  all: boolean,
  io: CliIO,
  p: Painter,
) {
  const ref = claimRef(flags, claim);
  let picked: ReturnType<typeof selectToApprove> = [];
  const written = await updateWithRetry(a.claims, ref, (c) => {
    picked = selectToApprove(c, refs, all);
    return withApprovals(c, picked);
  });
  const names = picked.map((x) => `${x.maintenanceNamespace}/${x.maintenanceName}`).join(', ');
  if (!written) io.out(`serverclaim/${claim} already approves ${names}`);
  else io.out(p.green(`serverclaim/${claim} approved ${names}`));
}

async function defer(
  a: Api,
  flags: GlobalFlags,
  claim: string,
  maintenance: string,
  o: { until: string; reason?: string },
  io: CliIO,
  p: Painter,
) {
  const now = new Date();
  const until = parseUntil(o.until, now);
  await updateWithRetry(a.claims, claimRef(flags, claim), (c) =>
    withDeferral(c, findAnnouncement(c, maintenance), until, now, o.reason),
  );
  io.out(
    p.green(
      `serverclaim/${claim} defers ${maintenance} until ${until.toISOString().replace(/\.\d{3}Z$/, 'Z')}`,
    ),
  );
}

async function status(a: Api, flags: GlobalFlags, io: CliIO, p: Painter) {
  const ns = flags.namespace;
  // Each list on its own: a tenant may list its namespace's objects but not cluster-scoped servers or
  // fleet budgets. What it may not see is said, not failed on.
  const lists = await Promise.all([
    listVisible(a.servers, 'servers'),
    listVisible(a.claims, 'serverclaims', ns),
    listVisible(a.maintenances, 'servermaintenances', ns),
    listVisible(a.serverBudgets, 'serverdisruptionbudgets'),
    listVisible(a.claimBudgets, 'serverclaimdisruptionbudgets', ns),
  ]);
  const [servers, claims, maintenances, serverBudgets, claimBudgets] = lists.map((l) => l.items) as [
    Server[],
    ServerClaim[],
    ServerMaintenance[],
    ServerDisruptionBudget[],
    ServerClaimDisruptionBudget[],
  ];
  const objects = { servers, claims, maintenances, serverBudgets, claimBudgets };
  io.out(p.bold('MAINTENANCES'));
  const rows = maintenanceRows(objects);
  io.out(rows.length ? table(MAINTENANCE_HEAD, rows) : 'none');
  io.out('');
  io.out(p.bold('BUDGETS'));
  const budgets = budgetRows(objects);
  io.out(budgets.length ? table(BUDGET_HEAD, budgets) : 'none');
  io.out('');
  // Firmware objects and Sets: cluster-scoped, so a tenant may not see them; said, not failed on.
  const [items, setLists] = await Promise.all([
    Promise.all(a.firmware.map(async (f) => ({ kind: f.kind, listed: await listVisible(f.res, f.kind) }))),
    Promise.all(
      a.firmwareSets.map(async (f) => ({ kind: f.kind, listed: await listVisible(f.res, f.kind) })),
    ),
  ]);
  const firmware: FirmwareObjects = {
    items: items.flatMap((l) => l.listed.items.map((obj) => ({ kind: l.kind, obj }))),
    sets: setLists.flatMap((l) => l.listed.items.map((obj) => ({ kind: l.kind, obj }))),
  };
  io.out(p.bold('FIRMWARE'));
  const fw = firmwareRows(firmware);
  io.out(fw.length ? table(FIRMWARE_HEAD, fw) : 'none');
  const sets = firmwareSetRows(firmware);
  if (sets.length) io.out(table(FIRMWARE_SET_HEAD, sets));
  io.out('');
  const hidden = [...lists, ...items.map((l) => l.listed), ...setLists.map((l) => l.listed)].flatMap((l) =>
    l.hidden ? [l.hidden] : [],
  );
  io.out(summaryLine(fleetSummary(objects), { serversHidden: lists[0].hidden !== undefined }));
  if (hidden.length > 0) {
    io.out('');
    io.out(p.bold('HIDDEN (not allowed to list; the rest above is complete)'));
    for (const h of hidden) io.out(`  ${h}`);
  }
}

async function pipelineStatus(a: Api, name: string, io: CliIO, p: Painter) {
  const [pipeline, runs] = await Promise.all([a.pipelines.get(name), listAllOrNone(a.pipelineRuns)]);
  for (const line of pipelineStatusLines(pipeline, runs, p)) io.out(line);
}

interface MigrateFlags {
  apply?: boolean;
  deleteLegacy?: boolean;
  removeLegacyFinalizer?: boolean;
}

/** The program, and the exit code its actions ask for (besides thrown errors). */
export function buildProgram(io: CliIO = defaultIO): { program: Command; result: { exitCode: number } } {
  const result = { exitCode: 0 };
  const program = new Command('kubectl-metal')
    .description(
      'Maintenance contract for IronCore bare-metal fleets: migrate, cordon, approve, defer, status, pipeline',
    )
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .option('-n, --namespace <ns>', 'namespace of claims and maintenances')
    .option('--no-color', 'no colours (also NO_COLOR)')
    .showHelpAfterError()
    .exitOverride();
  const g = (cmd: Command) => cmd.optsWithGlobals<GlobalFlags>();
  const paint = (cmd: Command) => painter(wantsColor(g(cmd).color));

  program
    .command('migrate')
    .description(
      'convert legacy metal.ironcore.dev ServerMaintenances and maintenance-* labels into typed objects; ' +
        'shows a diff and checks it with a server dry run unless --apply',
    )
    .option('--apply', 'make the changes')
    .option('--delete-legacy', 'delete each legacy object once its replacement exists')
    .option(
      '--remove-legacy-finalizer',
      "with --delete-legacy: also remove metal-operator's finalizer from each deleted legacy object " +
        '(only once metal-operator no longer runs the legacy controller)',
    )
    .action(async (o: MigrateFlags, cmd: Command) => {
      const flags = g(cmd);
      if (o.removeLegacyFinalizer && !o.deleteLegacy)
        throw new MetalError(CliErrors.USAGE, '--remove-legacy-finalizer needs --delete-legacy');
      const migrated = await withApi(flags, (a) =>
        runMigrate(a, {
          apply: !!o.apply,
          deleteLegacy: !!o.deleteLegacy,
          removeLegacyFinalizer: !!o.removeLegacyFinalizer,
          namespace: flags.namespace,
          p: paint(cmd),
          print: io.out,
        }),
      );
      if (migrated.results.some((r) => !r.ok)) result.exitCode = 1;
    });

  for (const [name, unclaimable] of [
    ['cordon', true],
    ['uncordon', false],
  ] as const)
    program
      .command(`${name} <server...>`)
      .description(
        unclaimable
          ? 'keep new claims off servers (spec.unclaimable); bound claims stay'
          : 'let claims bind again',
      )
      .option('--dry-run', 'server-side dry run')
      .action(async (servers: string[], o: { dryRun?: boolean }, cmd: Command) =>
        withApi(g(cmd), (a) => cordon(a, servers, unclaimable, !!o.dryRun, io, paint(cmd))),
      );

  program
    .command('approve <claim> [maintenance...]')
    .description('approve announced maintenances of a claim (by name, namespace/name or uid), or --all')
    .option('--all', 'every announced maintenance not yet approved')
    .action(async (claim: string, refs: string[], o: { all?: boolean }, cmd: Command) =>
      withApi(g(cmd), (a) => approve(a, g(cmd), claim, refs, !!o.all, io, paint(cmd))),
    );

  program
    .command('defer <claim> <maintenance>')
    .description('ask that an announced maintenance start no earlier than --until (within its deadline)')
    .addOption(
      new Option('--until <time>', 'RFC 3339 time or a duration from now (90m, 2h)').makeOptionMandatory(),
    )
    .option('--reason <text>', 'shown to the operator')
    .action(async (claim: string, maintenance: string, o: { until: string; reason?: string }, cmd: Command) =>
      withApi(g(cmd), (a) => defer(a, g(cmd), claim, maintenance, o, io, paint(cmd))),
    );

  program
    .command('status')
    .description('maintenances, budgets and the fleet at a glance')
    .action(async (_o: unknown, cmd: Command) => withApi(g(cmd), (a) => status(a, g(cmd), io, paint(cmd))));

  program
    .command('pipeline')
    .description('MaintenancePipelines')
    .command('status <name>')
    .description("a pipeline's runs, stages and servers, with the aggregate phases")
    .action(async (name: string, _o: unknown, cmd: Command) =>
      withApi(g(cmd), (a) => pipelineStatus(a, name, io, paint(cmd))),
    );
  return { program, result };
}

/** Runs the plugin; resolves with the exit code. */
export async function main(argv: readonly string[], io: CliIO = defaultIO): Promise<number> {
  const { program, result } = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return result.exitCode;
  } catch (e) {
    const code = (e as { code?: string }).code ?? '';
    if (code.startsWith('commander.'))
      return code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 2;
    if (e instanceof KubeApiError) io.err(`error: ${e.status.message ?? e.message}`);
    else if (e instanceof MetalError) io.err(`error: ${e.code}: ${e.message}`);
    else io.err(`error: ${errorMessage(e)}`);
    return e instanceof MetalError && e.code === CliErrors.USAGE ? 2 : 1;
  }
}

// Run directly (`tsx cli/main.ts ...`); the kubectl-metal shim imports main() instead.
if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}

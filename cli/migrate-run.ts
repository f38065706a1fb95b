// `kubectl metal migrate`, the I/O part: read the cluster, plan, show the diff, then either check
// every write with a server-side dry run (default) or make them (--apply). The order of writes
// keeps the one promise that matters: a legacy object is deleted only after its replacement has
// been read back from the API server.
import { isAlreadyExists, isNotFound, KubeApiError } from '../lib/kube/errors.js';
import { updateWithRetry } from '../lib/kube/status-writer.js';
import { MetalError, errorMessage } from '../lib/errors.js';
import type { KubeObject } from '../api/schema/meta.js';
import { LEGACY_MAINTENANCE_FINALIZER } from '../api/legacy/v1alpha1/servermaintenance.js';
import { listAllOrNone, type Api } from './kube.js';
import {
  claimAfter,
  isReplacementOf,
  planMigration,
  serverAfter,
  type MigrationAction,
  type MigrationPlan,
} from './migrate.js';
import { describeAction, renderPlan } from './migrate-render.js';
import type { Painter } from './output.js';

export interface MigrateOptions {
  apply: boolean;
  deleteLegacy: boolean;
  /**
   * With deleteLegacy: also remove metal-operator's finalizer from each deleted legacy object. For
   * clusters whose metal-operator no longer runs the legacy controller (past #1130), where nothing
   * else would ever remove it.
   */
  removeLegacyFinalizer?: boolean;
  /** Only legacy objects and claims in this namespace, and legacy references into it. */
  namespace?: string;
  p: Painter;
  print: (text: string) => void;
}

export interface ActionResult {
  action: MigrationAction;
  ok: boolean;
  message: string;
}

export interface MigrateResult {
  plan: MigrationPlan;
  results: ActionResult[];
}

export async function readPlan(
  a: Api,
  o: Pick<MigrateOptions, 'deleteLegacy' | 'namespace'>,
): Promise<MigrationPlan> {
  const [allLegacy, typed, claims, servers] = await Promise.all([
    listAllOrNone(a.legacy),
    listAllOrNone(a.maintenances),
    listAllOrNone(a.claims),
    listAllOrNone(a.servers),
  ]);
  // -n NS: only what belongs to NS (its legacy objects, its claims, references into it).
  const ns = o.namespace;
  const inNs = <T extends KubeObject>(list: T[]) =>
    ns ? list.filter((x) => x.metadata.namespace === ns) : list;
  return planMigration({
    legacy: inNs(allLegacy),
    allLegacy,
    typed,
    claims: inNs(claims),
    servers: ns ? servers.filter((s) => s.spec.serverMaintenanceRef?.namespace === ns) : servers,
    deleteLegacy: o.deleteLegacy,
  });
}

export async function runMigrate(a: Api, o: MigrateOptions): Promise<MigrateResult> {
  const plan = await readPlan(a, o);
  const mode = o.apply ? 'apply' : 'dry run: nothing is changed; review, then run again with --apply';
  o.print(o.p.bold(`Migration of legacy maintenance objects (${mode})\n`));
  o.print(renderPlan(plan, o.p));
  if (plan.actions.length === 0) return { plan, results: [] };
  const results = await execute(a, plan, {
    dryRun: !o.apply,
    removeLegacyFinalizer: !!o.removeLegacyFinalizer,
  });
  o.print('');
  for (const r of results) {
    const verb = o.apply
      ? r.ok
        ? 'done'
        : 'FAILED'
      : r.ok
        ? 'server dry run accepts'
        : 'server dry run REFUSES';
    const line = `${r.ok ? '✓' : '✗'} ${verb}: ${describeAction(r.action)}${r.message ? ` — ${r.message}` : ''}`;
    o.print(r.ok ? o.p.green(line) : o.p.red(line));
  }
  if (!o.apply) o.print(o.p.bold('\nDry run: nothing was changed. Run with --apply to make these changes.'));
  return { plan, results };
}

const key = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

interface ExecuteOptions {
  dryRun: boolean;
  removeLegacyFinalizer: boolean;
}

async function execute(a: Api, plan: MigrationPlan, opts: ExecuteOptions): Promise<ActionResult[]> {
  const results: ActionResult[] = [];
  const run = async (action: MigrationAction, fn: () => Promise<string | void>) => {
    try {
      results.push({ action, ok: true, message: (await fn()) ?? '' });
    } catch (e) {
      results.push({ action, ok: false, message: reason(e) });
    }
  };
  // Creates come first in the plan, so a delete always finds its replacement's fate decided.
  const created = new Set<string>();
  for (const action of plan.actions) {
    if (action.kind !== 'create') {
      await run(action, () => executeOne(a, action, opts, created));
      continue;
    }
    await run(action, async () => {
      await create(a, action, opts.dryRun);
      created.add(key(action.object));
    });
  }
  return results;
}

async function create(
  a: Api,
  action: Extract<MigrationAction, { kind: 'create' }>,
  dryRun: boolean,
): Promise<void> {
  try {
    await a.maintenances.create(action.object, { dryRun });
  } catch (e) {
    // Created meanwhile (another run): fine if it is our replacement.
    if (!isAlreadyExists(e)) throw e;
    const existing = await a.maintenances.get(action.object.metadata.name!, action.object.metadata.namespace);
    if (!isReplacementOf(existing, action.legacy)) throw e;
  }
}

async function executeOne(
  a: Api,
  action: MigrationAction,
  opts: ExecuteOptions,
  created: Set<string>,
): Promise<string | void> {
  const { dryRun } = opts;
  switch (action.kind) {
    case 'create':
      return;
    case 'deleteLegacy':
      return deleteLegacy(a, action, opts, created);
    case 'updateClaim': {
      const { name, namespace } = action.claim.metadata;
      const done = await updateWithRetry(a.claims, { name: name!, namespace }, (c) => claimAfter(c, action), {
        dryRun,
      });
      return done ? undefined : 'already so';
    }
    case 'clearRef': {
      const done = await updateWithRetry(
        a.servers,
        { name: action.server.metadata.name! },
        (s) => serverAfter(s, action.ref),
        {
          dryRun,
        },
      );
      return done ? undefined : 'already cleared';
    }
  }
}

/** Never before the replacement exists: read it back (or, in a dry run, see it planned) first. */
async function deleteLegacy(
  a: Api,
  action: Extract<MigrationAction, { kind: 'deleteLegacy' }>,
  { dryRun, removeLegacyFinalizer }: ExecuteOptions,
  created: Set<string>,
): Promise<string | void> {
  const { namespace, name } = action.replacement;
  const replacement = await a.maintenances.find(name, namespace);
  const plannedOnly = dryRun && !replacement && created.has(`${namespace}/${name}`);
  if (!plannedOnly && (!replacement || !isReplacementOf(replacement, action.legacy)))
    throw new MetalError(
      'METAL_ERR_CLI_NO_REPLACEMENT',
      `replacement ${namespace}/${name} does not exist (or was not converted from it); the legacy object stays`,
    );
  try {
    await a.legacy.delete(action.legacy.metadata.name!, {
      namespace: action.legacy.metadata.namespace,
      preconditions: { uid: action.legacy.metadata.uid },
      dryRun,
    });
  } catch (e) {
    if (isNotFound(e)) return 'already gone';
    throw e;
  }
  const finalizers = action.legacy.metadata.finalizers ?? [];
  const notes: string[] = [];
  let left = finalizers;
  if (removeLegacyFinalizer && finalizers.includes(LEGACY_MAINTENANCE_FINALIZER)) {
    await removeFinalizer(a, action.legacy, dryRun);
    notes.push(`finalizer ${LEGACY_MAINTENANCE_FINALIZER} removed`);
    left = finalizers.filter((f) => f !== LEGACY_MAINTENANCE_FINALIZER);
  }
  if (left.length > 0) notes.push(`terminating until ${left.join(', ')} is removed by its controller`);
  return notes.join('; ') || undefined;
}

/**
 * Takes metal-operator's finalizer off a deleted legacy object (compare-and-swap on resourceVersion,
 * re-read on conflict). Only that object: one recreated under the same name has another uid and is
 * left alone, as is any other finalizer.
 */
async function removeFinalizer(a: Api, legacy: KubeObject, dryRun: boolean): Promise<void> {
  const { name, namespace, uid } = legacy.metadata;
  await updateWithRetry(
    a.legacy,
    { name: name!, namespace },
    (current) => {
      const finalizers = current.metadata.finalizers ?? [];
      if (current.metadata.uid !== uid || !finalizers.includes(LEGACY_MAINTENANCE_FINALIZER))
        return undefined;
      current.metadata.finalizers = finalizers.filter((f) => f !== LEGACY_MAINTENANCE_FINALIZER);
      return current;
    },
    { dryRun },
  );
}

function reason(e: unknown): string {
  if (e instanceof KubeApiError) return e.status.message ?? e.message;
  return errorMessage(e);
}

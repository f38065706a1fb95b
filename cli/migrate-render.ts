// The migration plan as a diff a person can review before `--apply`.
import { stringify } from 'yaml';
import { LegacyServerMaintenanceKind } from '../api/legacy/v1alpha1/servermaintenance.js';
import { ServerClaimKind } from '../api/metal/v1alpha1/serverclaim.js';
import { ServerKind } from '../api/metal/v1alpha1/server.js';
import type { KubeObject } from '../api/schema/meta.js';
import { claimAfter, serverAfter, type MigrationAction, type MigrationPlan } from './migrate.js';
import { lineDiff, renderDiff, type Painter } from './output.js';

const yamlLines = (v: unknown) => stringify(v, { lineWidth: 0 }).trimEnd().split('\n');
const id = (o: KubeObject) =>
  `${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name ?? ''}`;

/** The part of an object a migration write touches, for a compact diff. */
function touched(o: KubeObject & { spec?: unknown }, spec: (s: never) => unknown): unknown {
  return { metadata: { labels: o.metadata.labels ?? {} }, spec: spec(o.spec as never) };
}

export function describeAction(a: MigrationAction): string {
  switch (a.kind) {
    case 'create':
      return `create ${a.object.apiVersion} ServerMaintenance ${id(a.object)} (replaces ${LegacyServerMaintenanceKind.apiVersion} ServerMaintenance ${id(a.legacy)})`;
    case 'deleteLegacy':
      return `delete ${LegacyServerMaintenanceKind.apiVersion} ServerMaintenance ${id(a.legacy)} (once ${a.replacement.namespace}/${a.replacement.name} exists)`;
    case 'updateClaim': {
      const what = [
        ...(a.approvals.length ? [`approve ${a.approvals.length} announced maintenance(s)`] : []),
        ...a.removeLabels.map((r) => `remove label ${r.label} (${r.why})`),
      ];
      return `update ${ServerClaimKind.apiVersion} ServerClaim ${id(a.claim)}: ${what.join('; ')}`;
    }
    case 'clearRef':
      return `update ${ServerKind.apiVersion} Server ${id(a.server)}: clear spec.serverMaintenanceRef ${a.ref.namespace}/${a.ref.name} (the legacy object is gone)`;
  }
}

function actionBody(a: MigrationAction, p: Painter): string[] {
  switch (a.kind) {
    case 'create':
      return [
        ...yamlLines(a.object).map((l) => p.green(`+     ${l}`)),
        ...a.notes.map((n) => p.yellow(`      note: ${n}`)),
      ];
    case 'deleteLegacy':
      return yamlLines({ spec: a.legacy.spec, status: a.legacy.status }).map((l) => p.red(`-     ${l}`));
    case 'updateClaim': {
      const after = claimAfter(a.claim, a) ?? a.claim;
      const pick = (s: { maintenance?: unknown }) => ({ maintenance: s.maintenance });
      return renderDiff(lineDiff(yamlLines(touched(a.claim, pick)), yamlLines(touched(after, pick))), p);
    }
    case 'clearRef': {
      const after = serverAfter(a.server, a.ref) ?? a.server;
      const pick = (s: { serverMaintenanceRef?: unknown }) => ({
        serverMaintenanceRef: s.serverMaintenanceRef,
      });
      return renderDiff(lineDiff(yamlLines(touched(a.server, pick)), yamlLines(touched(after, pick))), p);
    }
  }
}

const SIGN: Record<MigrationAction['kind'], '+' | '-' | '~'> = {
  create: '+',
  deleteLegacy: '-',
  updateClaim: '~',
  clearRef: '~',
};

export function renderPlan(plan: MigrationPlan, p: Painter): string {
  const out: string[] = [];
  for (const a of plan.actions) {
    const sign = SIGN[a.kind];
    const head = `${sign} ${describeAction(a)}`;
    out.push(p.bold(sign === '+' ? p.green(head) : sign === '-' ? p.red(head) : p.yellow(head)));
    out.push(...actionBody(a, p));
    out.push('');
  }
  for (const s of plan.skipped) out.push(p.dim(`  skip ${s.object}: ${s.why}`));
  for (const u of plan.upToDate) out.push(p.dim(`  up to date: ${u}`));
  for (const n of plan.pending) out.push(p.yellow(`  later: ${n}`));
  if (plan.skipped.length + plan.upToDate.length + plan.pending.length > 0) out.push('');
  out.push(summary(plan));
  return out.join('\n');
}

export function summary(plan: MigrationPlan): string {
  const count = (k: MigrationAction['kind']) => plan.actions.filter((a) => a.kind === k).length;
  if (plan.actions.length === 0)
    return `Nothing to do (${plan.upToDate.length} already migrated, ${plan.skipped.length} skipped).`;
  const parts = [
    `${count('create')} to create`,
    `${count('deleteLegacy')} legacy to delete`,
    `${count('updateClaim')} claim update(s)`,
    `${count('clearRef')} server reference(s) to clear`,
  ];
  return `Plan: ${parts.join(', ')}; ${plan.upToDate.length} already migrated, ${plan.skipped.length} skipped.`;
}

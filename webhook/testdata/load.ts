// Loads the test fixtures under webhook/testdata: the world (YAML) and AdmissionReviews (JSON).
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { AdmissionRequest } from '../admission.js';
import type { WorldContents } from '../testing/memory-world.js';

export interface Fixtures {
  servers: Server[];
  claims: ServerClaim[];
  maintenances: ServerMaintenance[];
  serverBudgets: ServerDisruptionBudget[];
  claimBudgets: ServerClaimDisruptionBudget[];
}

/** The test clock: Tuesday 2026-03-10 12:00 UTC. */
export const NOW = new Date('2026-03-10T12:00:00Z');
export const MAINTENANCE_CONTROLLER = 'system:serviceaccount:metal-maintenance-system:maintenance-controller';
export const APPROVAL_CONTROLLER = 'system:serviceaccount:metal-maintenance-system:approval-controller';
export const DRAIN_CONTROLLER = 'system:serviceaccount:metal-maintenance-system:drain-controller';

/** A fresh copy of the world in world.yaml. */
export function loadWorld(): Fixtures & Required<Pick<WorldContents, 'bmcs'>> {
  const text = readFileSync(new URL('./world.yaml', import.meta.url), 'utf8');
  const out: Fixtures & Required<Pick<WorldContents, 'bmcs'>> = {
    servers: [],
    claims: [],
    maintenances: [],
    serverBudgets: [],
    claimBudgets: [],
    bmcs: [],
  };
  for (const doc of parseAllDocuments(text)) {
    const obj = doc.toJS() as { kind: string };
    if (obj.kind === 'Server') out.servers.push(obj as unknown as Server);
    if (obj.kind === 'ServerClaim') out.claims.push(obj as unknown as ServerClaim);
    if (obj.kind === 'ServerMaintenance') out.maintenances.push(obj as unknown as ServerMaintenance);
  }
  return out;
}

export function find<T extends { metadata: { name?: string } }>(list: T[], name: string): T {
  const found = list.find((x) => x.metadata.name === name);
  if (!found) throw new Error(`fixture ${name} not found`);
  return found;
}

/** A review fixture from testdata/reviews/<name>.json (the whole AdmissionReview). */
export function loadReview(name: string): { apiVersion: string; kind: string; request: AdmissionRequest } {
  return JSON.parse(readFileSync(new URL(`./reviews/${name}.json`, import.meta.url), 'utf8')) as {
    apiVersion: string;
    kind: string;
    request: AdmissionRequest;
  };
}

const RESOURCES: Record<string, { group: string; version: string; resource: string }> = {
  Server: { group: 'metal.ironcore.dev', version: 'v1alpha1', resource: 'servers' },
  ServerClaim: { group: 'metal.ironcore.dev', version: 'v1alpha1', resource: 'serverclaims' },
  ServerMaintenance: {
    group: 'maintenance.metal.ironcore.dev',
    version: 'v1alpha1',
    resource: 'servermaintenances',
  },
  ServerBoot: { group: 'maintenance.metal.ironcore.dev', version: 'v1alpha1', resource: 'serverboots' },
  ServerDisruptionBudget: {
    group: 'maintenance.metal.ironcore.dev',
    version: 'v1alpha1',
    resource: 'serverdisruptionbudgets',
  },
  ServerClaimDisruptionBudget: {
    group: 'maintenance.metal.ironcore.dev',
    version: 'v1alpha1',
    resource: 'serverclaimdisruptionbudgets',
  },
  ConfigMap: { group: '', version: 'v1', resource: 'configmaps' },
  BIOSVersion: { group: 'system.metal.ironcore.dev', version: 'v1alpha1', resource: 'biosversions' },
  BMCSettings: { group: 'baseboard.metal.ironcore.dev', version: 'v1alpha1', resource: 'bmcsettings' },
};

export interface RequestSpec {
  kind: keyof typeof RESOURCES;
  operation: AdmissionRequest['operation'];
  object?: unknown;
  oldObject?: unknown;
  subResource?: string;
  user?: string;
  dryRun?: boolean;
  uid?: string;
}

/** Builds an AdmissionRequest the way the API server fills one in. */
export function request(spec: RequestSpec): AdmissionRequest {
  const r = RESOURCES[spec.kind]!;
  const meta = (
    (spec.object ?? spec.oldObject) as { metadata?: { name?: string; namespace?: string } } | undefined
  )?.metadata;
  return {
    uid: spec.uid ?? '00000000-0000-0000-0000-000000000001',
    kind: { group: r.group, version: r.version, kind: spec.kind },
    resource: { group: r.group, version: r.version, resource: r.resource },
    ...(spec.subResource ? { subResource: spec.subResource } : {}),
    ...(meta?.name ? { name: meta.name } : {}),
    ...(meta?.namespace ? { namespace: meta.namespace } : {}),
    operation: spec.operation,
    userInfo: { username: spec.user ?? 'alice', groups: ['system:authenticated'] },
    object: spec.object ?? null,
    oldObject: spec.oldObject ?? null,
    dryRun: spec.dryRun ?? false,
  };
}

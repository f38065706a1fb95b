// The plugin's connection to the cluster and its typed resource handles. kubectl does not pass its
// own flags to plugins, so --kubeconfig/--context are ours; otherwise $KUBECONFIG or ~/.kube/config,
// as kubectl resolves them.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../lib/kube/client.js';

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { MetalError } from '../lib/errors.js';
import { isForbidden, isNotFound, KubeApiError } from '../lib/kube/errors.js';
import type { ResourceClient } from '../lib/kube/client.js';
import type { KubeObject } from '../api/schema/meta.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import type { ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { LegacyServerMaintenance } from '../api/legacy/v1alpha1/servermaintenance.js';
import type { MaintenancePipeline } from '../api/maintenance/v1alpha1/maintenancepipeline.js';
import type { MaintenancePipelineRun } from '../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import type { FirmwareItem, FirmwareKindName, FirmwareSetItem } from './firmware-status.js';
import {
  FirmwareResources,
  FirmwareSetResources,
  LegacyServerMaintenanceResource,
  MaintenancePipelineResource,
  MaintenancePipelineRunResource,
  ServerClaimDisruptionBudgetResource,
  ServerClaimResource,
  ServerDisruptionBudgetResource,
  ServerMaintenanceResource,
  ServerResource,
} from '../lib/kube/kinds.js';

export interface ConnectionFlags {
  kubeconfig?: string;
  context?: string;
}

/** Where the plugin looks for a kubeconfig, as kubectl does, and what a missing one is called. */
export const KUBECONFIG_ERRORS = {
  NO_KUBECONFIG: 'METAL_ERR_CLI_NO_KUBECONFIG',
  NO_CONTEXT: 'METAL_ERR_CLI_NO_CONTEXT',
} as const;

interface Where {
  env: NodeJS.ProcessEnv;
  home: string;
}

/**
 * The kubeconfig files to load: --kubeconfig, else every existing file of $KUBECONFIG, else
 * ~/.kube/config; undefined for in-cluster. Throws naming every place it looked when there is none:
 * the client library would otherwise fall back to http://localhost and fail with a TLS message.
 */
export function kubeconfigFiles(flags: ConnectionFlags, where: Where): string[] | undefined {
  if (flags.kubeconfig) {
    if (!existsSync(flags.kubeconfig))
      throw new MetalError(KUBECONFIG_ERRORS.NO_KUBECONFIG, `--kubeconfig ${flags.kubeconfig}: no such file`);
    return [flags.kubeconfig];
  }
  const listed = (where.env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  const found = listed.filter((f) => existsSync(f));
  if (found.length > 0) return found;
  const home = join(where.home, '.kube', 'config');
  if (listed.length === 0 && existsSync(home)) return [home];
  if (where.env.KUBERNETES_SERVICE_HOST) return undefined;
  const looked = listed.length
    ? `$KUBECONFIG (${listed.join(delimiter)}: no such file)`
    : `$KUBECONFIG (unset), ${home} (no such file), in-cluster (KUBERNETES_SERVICE_HOST unset)`;
  throw new MetalError(
    KUBECONFIG_ERRORS.NO_KUBECONFIG,
    `no kubeconfig found; looked in ${looked}. Pass --kubeconfig PATH or set KUBECONFIG`,
  );
}

export async function connect(
  flags: ConnectionFlags,
  where: Where = { env: process.env, home: process.env.HOME || homedir() },
): Promise<KubeClient> {
  const kc = new KubeConfig();
  const files = kubeconfigFiles(flags, where);
  if (!files) kc.loadFromCluster();
  else {
    // $KUBECONFIG with several files: merged in order, the first one's current context wins (kubectl).
    kc.loadFromFile(files[0]!);
    for (const f of files.slice(1)) {
      const more = new KubeConfig();
      more.loadFromFile(f);
      kc.mergeConfig(more, true);
    }
  }
  const source = files ? files.join(delimiter) : 'the in-cluster config';
  const contexts = kc.getContexts().map((c) => c.name);
  if (flags.context) {
    if (!contexts.includes(flags.context))
      throw new MetalError(
        KUBECONFIG_ERRORS.NO_CONTEXT,
        `context "${flags.context}" is not in ${source}; it has ${contexts.length ? contexts.map((c) => `"${c}"`).join(', ') : 'no contexts'}`,
      );
    kc.setCurrentContext(flags.context);
  }
  if (!kc.getCurrentCluster())
    throw new MetalError(
      KUBECONFIG_ERRORS.NO_CONTEXT,
      `${source} names no current context with a cluster (current-context: "${kc.getCurrentContext() ?? ''}"); pass --context, one of ${contexts.map((c) => `"${c}"`).join(', ') || '(none)'}`,
    );
  return KubeClient.fromKubeConfig(kc, { userAgent: 'kubectl-metal' });
}

export interface Api {
  client: KubeClient;
  servers: ResourceClient<Server>;
  claims: ResourceClient<ServerClaim>;
  maintenances: ResourceClient<ServerMaintenance>;
  legacy: ResourceClient<LegacyServerMaintenance>;
  serverBudgets: ResourceClient<ServerDisruptionBudget>;
  claimBudgets: ResourceClient<ServerClaimDisruptionBudget>;
  pipelines: ResourceClient<MaintenancePipeline>;
  pipelineRuns: ResourceClient<MaintenancePipelineRun>;
  firmware: { kind: FirmwareKindName; res: ResourceClient<FirmwareItem> }[];
  firmwareSets: { kind: `${FirmwareKindName}Set`; res: ResourceClient<FirmwareSetItem> }[];
}

export function api(client: KubeClient): Api {
  return {
    client,
    servers: client.resource(ServerResource),
    claims: client.resource(ServerClaimResource),
    maintenances: client.resource(ServerMaintenanceResource),
    legacy: client.resource(LegacyServerMaintenanceResource),
    serverBudgets: client.resource(ServerDisruptionBudgetResource),
    claimBudgets: client.resource(ServerClaimDisruptionBudgetResource),
    pipelines: client.resource(MaintenancePipelineResource),
    pipelineRuns: client.resource(MaintenancePipelineRunResource),
    firmware: Object.entries(FirmwareResources).map(([kind, rt]) => ({
      kind: kind as FirmwareKindName,
      res: client.resource<FirmwareItem>(rt),
    })),
    firmwareSets: Object.entries(FirmwareSetResources).map(([kind, rt]) => ({
      kind: kind as `${FirmwareKindName}Set`,
      res: client.resource<FirmwareSetItem>(rt),
    })),
  };
}

/** Every object (all pages); [] when the resource is not served (its CRD is not installed). */
export async function listAllOrNone<T extends KubeObject>(
  res: ResourceClient<T>,
  namespace?: string,
): Promise<T[]> {
  try {
    return (await res.listAll({ namespace })).items;
  } catch (e) {
    if (isNotFound(e)) return [];
    throw e;
  }
}

/** A list, or what the user may not see and why (a tenant may not list cluster-scoped kinds). */
export interface Listed<T> {
  items: T[];
  hidden?: string;
}

/** listAllOrNone, except that a 403 is reported as hidden instead of failing the whole command. */
export async function listVisible<T extends KubeObject>(
  res: ResourceClient<T>,
  what: string,
  namespace?: string,
): Promise<Listed<T>> {
  try {
    return { items: await listAllOrNone(res, namespace) };
  } catch (e) {
    if (!isForbidden(e)) throw e;
    const why = e instanceof KubeApiError ? (e.status.message ?? e.message) : String(e);
    return {
      items: [],
      hidden: `${what} ${namespace ? `in namespace ${namespace}` : '(all namespaces)'}: ${why}`,
    };
  }
}

// The plugin's connection to the cluster and its typed resource handles. kubectl does not pass its
// own flags to plugins, so --kubeconfig/--context are ours; otherwise $KUBECONFIG or ~/.kube/config,
// as kubectl resolves them.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../lib/kube/client.js';

import { isNotFound } from '../lib/kube/errors.js';
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
import {
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

export async function connect(flags: ConnectionFlags): Promise<KubeClient> {
  const kc = new KubeConfig();
  if (flags.kubeconfig) kc.loadFromFile(flags.kubeconfig);
  else kc.loadFromDefault();
  if (flags.context) kc.setCurrentContext(flags.context);
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

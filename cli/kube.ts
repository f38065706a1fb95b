// The plugin's connection to the cluster and its typed resource handles. kubectl does not pass its
// own flags to plugins, so --kubeconfig/--context are ours; otherwise $KUBECONFIG or ~/.kube/config,
// as kubectl resolves them.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../lib/kube/client.js';
import { resourceOf } from '../lib/kube/resources.js';
import { isNotFound } from '../lib/kube/errors.js';
import type { ResourceClient } from '../lib/kube/client.js';
import type { KubeObject } from '../api/schema/meta.js';
import { ServerKind, type Server } from '../api/metal/v1alpha1/server.js';
import { ServerClaimKind, type ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../api/maintenance/v1alpha1/servermaintenance.js';
import {
  ServerDisruptionBudgetKind,
  type ServerDisruptionBudget,
} from '../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import {
  ServerClaimDisruptionBudgetKind,
  type ServerClaimDisruptionBudget,
} from '../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import {
  LegacyServerMaintenanceKind,
  type LegacyServerMaintenance,
} from '../api/legacy/v1alpha1/servermaintenance.js';

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
}

export function api(client: KubeClient): Api {
  return {
    client,
    servers: client.resource(resourceOf(ServerKind)),
    claims: client.resource(resourceOf(ServerClaimKind)),
    maintenances: client.resource(resourceOf(ServerMaintenanceKind)),
    legacy: client.resource(resourceOf(LegacyServerMaintenanceKind)),
    serverBudgets: client.resource(resourceOf(ServerDisruptionBudgetKind)),
    claimBudgets: client.resource(resourceOf(ServerClaimDisruptionBudgetKind)),
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

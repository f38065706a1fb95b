// The objects the demo's acts write as their actors: a tenant's own identity, its claims, and the
// operators' maintenances. Each write is re-runnable (an object already there is kept).
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { ServerClaimKind, type ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { Core, objectKey, resourceOf } from '../../lib/kube/resources.js';
import { tokenKubeconfig } from '../harness/processes.js';
import { HOLD_ANNOTATION } from '../sim/fleet/decisions.js';
import { createOrKeep } from '../sim/fleet/fleet.js';

/** Where the demo's operators create their maintenances. */
export const OPS_NAMESPACE = 'ops';

/** A tenant's own identity: a ServiceAccount that may edit its namespace's claims, nothing else. */
export async function tenantOwner(admin: KubeClient, ns: string): Promise<string> {
  const create = (rt: (typeof Core)[keyof typeof Core], obj: object) =>
    createOrKeep(() => admin.resource(rt).create(obj as never));
  await create(Core.ServiceAccount, { metadata: { name: 'owner', namespace: ns } });
  await create(Core.Role, {
    metadata: { name: 'claim-owner', namespace: ns },
    rules: [
      {
        apiGroups: ['metal.ironcore.dev'],
        resources: ['serverclaims'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'],
      },
    ],
  });
  await create(Core.RoleBinding, {
    metadata: { name: 'claim-owner', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'claim-owner' },
    subjects: [{ kind: 'ServiceAccount', name: 'owner', namespace: ns }],
  });
  return (await tokenKubeconfig(admin, ns, 'owner')).kubeconfig;
}

export function createClaim(client: KubeClient, claim: ServerClaim): Promise<void> {
  return createOrKeep(() => client.resource<ServerClaim>(resourceOf(ServerClaimKind)).create(claim));
}

/** A maintenance in the ops namespace whose server the simulated metal-operator holds for `hold`. */
export async function createMaintenance(
  admin: KubeClient,
  name: string,
  server: string,
  spec: Partial<ServerMaintenance['spec']>,
  hold: string,
): Promise<string> {
  const m = await admin.resource<ServerMaintenance>(resourceOf(ServerMaintenanceKind)).create({
    metadata: { name, namespace: OPS_NAMESPACE, annotations: { [HOLD_ANNOTATION]: hold } },
    spec: { serverRef: { name: server }, ...spec },
  });
  return objectKey(m.metadata);
}

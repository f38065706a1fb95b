// The drain controller's edge towards Cluster API objects in the metal cluster: from a claim its
// provider's infrastructure machine owns, to the Machine, its Node (status.nodeRef), the Cluster's
// kubeconfig Secret and the MachineDrainRules of the Machine's namespace (facts in capi.ts). Read
// with the same per-namespace grant as the credentials (ClusterRole metal-maintenance-drain-credentials,
// bound by a RoleBinding in the tenant namespace).
import type { KubeObject, OwnerReference } from '../../api/schema/meta.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { isNotFound } from '../../lib/kube/errors.js';
import type { ResourceType } from '../../lib/kube/resources.js';
import type { WorkloadCluster } from '../../policies/schema.js';
import {
  CAPI_GROUP,
  CAPI_KUBECONFIG_KEY,
  CAPI_VERSION,
  kubeconfigSecretOf,
  machineOf,
  needsClusterLabels,
  pluralOf,
  type Machine,
  type MachineDrainRule,
} from './capi.js';

const capi = (kind: string, plural: string): ResourceType => ({
  group: CAPI_GROUP,
  version: CAPI_VERSION,
  kind,
  plural,
  namespaced: true,
});
export const MachineType = capi('Machine', 'machines');
export const ClusterType = capi('Cluster', 'clusters');
export const DrainRuleType = capi('MachineDrainRule', 'machinedrainrules');

export type CapiLookup =
  /** A link of the chain is missing (yet): the message says which. */
  | { kind: 'missing'; message: string }
  | {
      kind: 'found';
      machine: Machine;
      nodeName: string;
      credentials: WorkloadCluster;
      rules: MachineDrainRule[];
      clusterLabels: Record<string, string>;
    };

export async function lookUpCapi(
  metal: KubeClient,
  claim: KubeObject,
  infraRef: OwnerReference,
): Promise<CapiLookup> {
  const ns = claim.metadata.namespace ?? '';
  const [group, version] = infraRef.apiVersion.split('/') as [string, string];
  const infraType: ResourceType = {
    group,
    version,
    kind: infraRef.kind,
    plural: pluralOf(infraRef.kind),
    namespaced: true,
  };
  const infraName = `${infraRef.kind} ${ns}/${infraRef.name}`;
  const infra = await metal.resource<KubeObject>(infraType).find(infraRef.name, ns);
  if (!infra) return { kind: 'missing', message: `${infraName} (the claim's owner) does not exist` };
  const machineRef = machineOf(infra);
  if (!machineRef) return { kind: 'missing', message: `${infraName} is not owned by a Machine yet` };
  const machine = await metal.resource<Machine>(MachineType).find(machineRef.name, ns);
  const machineName = `Machine ${ns}/${machineRef.name}`;
  if (!machine) return { kind: 'missing', message: `${machineName} does not exist` };
  const nodeName = machine.status?.nodeRef?.name;
  if (!nodeName) return { kind: 'missing', message: `${machineName} has no status.nodeRef yet` };
  const secretName = kubeconfigSecretOf(machine);
  if (!secretName) return { kind: 'missing', message: `${machineName} has no spec.clusterName` };
  const rules = (await metal.resource<MachineDrainRule>(DrainRuleType).listAll({ namespace: ns })).items;
  let clusterLabels: Record<string, string> = {};
  if (needsClusterLabels(rules)) {
    try {
      clusterLabels =
        (await metal.resource<KubeObject>(ClusterType).get(machine.spec!.clusterName!, ns)).metadata.labels ??
        {};
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  return {
    kind: 'found',
    machine,
    nodeName,
    credentials: { namespace: ns, secretName, secretKey: CAPI_KUBECONFIG_KEY },
    rules,
    clusterLabels,
  };
}

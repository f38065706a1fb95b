// Gardener machine-controller-manager's side of finding a claim's Node, pure. The facts, from the
// published API (github.com/gardener/machine-controller-manager, pkg/apis/machine/v1alpha1):
//   - a Machine (machine.sapcloud.io/v1alpha1, namespaced: the shoot's namespace in the seed) carries
//     spec.providerID, which the IronCore MCM provider sets to metal://<claim-namespace>/<claim-name>;
//   - its Node's name is status.node, and MCM also labels the Machine `node: <name>` (NodeLabelKey);
//     before the Node joined both are empty.
import type { KubeObject } from '../../api/schema/meta.js';

export const MCM_GROUP = 'machine.sapcloud.io';
export const MCM_VERSION = 'v1alpha1';
/** The Machine label MCM sets to its Node's name. */
export const MCM_NODE_LABEL = 'node';

export interface McmMachine extends KubeObject {
  spec?: { providerID?: string };
  status?: { node?: string; currentStatus?: { phase?: string } };
}

export type McmLookup =
  { kind: 'missing'; message: string } | { kind: 'found'; machine: McmMachine; nodeName: string };

/** The Node name a Machine names: status.node, else its `node` label. */
export function machineNodeOf(m: McmMachine): string | undefined {
  return m.status?.node || m.metadata.labels?.[MCM_NODE_LABEL] || undefined;
}

/**
 * The Machine whose spec.providerID is `providerID` among `machines` (of namespace `namespace`) and its
 * Node. A Machine being deleted is passed over when another one names the same providerID (MCM makes
 * the replacement before the old one is gone); of several live ones the oldest wins, by name on a tie.
 */
export function findMcmMachine(
  machines: readonly McmMachine[],
  providerID: string,
  namespace: string,
): McmLookup {
  const matching = machines
    .filter((m) => m.spec?.providerID === providerID)
    .sort(
      (a, b) =>
        Number(a.metadata.deletionTimestamp !== undefined) -
          Number(b.metadata.deletionTimestamp !== undefined) ||
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
        (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
    );
  const machine = matching[0];
  if (!machine)
    return { kind: 'missing', message: `no MCM Machine in ${namespace} has spec.providerID ${providerID}` };
  const nodeName = machineNodeOf(machine);
  if (!nodeName)
    return {
      kind: 'missing',
      message: `MCM Machine ${namespace}/${machine.metadata.name ?? ''} has no status.node yet`,
    };
  return { kind: 'found', machine, nodeName };
}

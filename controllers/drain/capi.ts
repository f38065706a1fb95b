// Cluster API's side of finding a claim's Node and deciding its pods, pure. The facts, from the
// published sigs.k8s.io/cluster-api API types (core v1beta2) and the IronCore CAPI provider:
//   - an infrastructure machine (group infrastructure.cluster.x-k8s.io, e.g. IroncoreMetalMachine)
//     creates the ServerClaim and owns it (ownerReference);
//   - the infrastructure machine is owned by a Machine (cluster.x-k8s.io), whose status.nodeRef.name
//     is the Node and spec.clusterName its Cluster;
//   - the Cluster's kubeconfig is the Secret `<cluster>-kubeconfig`, key `value`, in its namespace;
//   - MachineDrainRules (namespaced, spec.drain.behavior Drain | Skip | WaitCompleted, spec.drain.order,
//     spec.machines[] {selector, clusterSelector}, spec.pods[] {selector, namespaceSelector}; a
//     missing list selects all) decide per pod; the pod label cluster.x-k8s.io/drain wins over them;
//     of several matching rules the first by name applies; pods are drained by increasing order, a
//     group only after every pod of the lower groups is gone.
import type { LabelSelector } from '../../api/schema/common.js';
import type { KubeObject, OwnerReference } from '../../api/schema/meta.js';
import { matchesSelector } from '../../contract/selectors.js';

export const CAPI_GROUP = 'cluster.x-k8s.io';
export const CAPI_INFRA_GROUP = 'infrastructure.cluster.x-k8s.io';
export const CAPI_VERSION = 'v1beta2';
/** The key of the Cluster kubeconfig Secret (`<cluster>-kubeconfig`). */
export const CAPI_KUBECONFIG_KEY = 'value';

export interface Machine extends KubeObject {
  spec?: { clusterName?: string };
  status?: { nodeRef?: { name?: string } };
}

export interface MachineDrainRule extends KubeObject {
  spec?: {
    drain?: { behavior?: 'Drain' | 'Skip' | 'WaitCompleted'; order?: number };
    machines?: { selector?: LabelSelector; clusterSelector?: LabelSelector }[];
    pods?: { selector?: LabelSelector; namespaceSelector?: LabelSelector }[];
  };
}

/** What the rules say about one pod. */
export interface PodRule {
  behavior: 'Drain' | 'Skip' | 'WaitCompleted';
  order: number;
  /** The MachineDrainRule that said it (`namespace/name`). */
  rule: string;
}

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

/** The infrastructure machine owning the claim, if a Cluster API provider made it. */
export function infraMachineOf(claim: KubeObject): OwnerReference | undefined {
  const refs = claim.metadata.ownerReferences ?? [];
  return (
    refs.find((r) => groupOf(r.apiVersion) === CAPI_INFRA_GROUP && r.controller) ??
    refs.find((r) => groupOf(r.apiVersion) === CAPI_INFRA_GROUP)
  );
}

/** The Machine owning an infrastructure machine. */
export function machineOf(infra: KubeObject): OwnerReference | undefined {
  return (infra.metadata.ownerReferences ?? []).find(
    (r) => groupOf(r.apiVersion) === CAPI_GROUP && r.kind === 'Machine',
  );
}

/** The resource of an owner reference's kind: kubebuilder's default plural (lower-case kind + s). */
export function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  return lower.endsWith('s') ? `${lower}es` : `${lower}s`;
}

export function kubeconfigSecretOf(machine: Machine): string | undefined {
  const cluster = machine.spec?.clusterName;
  return cluster ? `${cluster}-kubeconfig` : undefined;
}

/** Whether any rule needs the labels of pods' namespaces (so the edge reads them only then). */
export const needsNamespaceLabels = (rules: readonly MachineDrainRule[]) =>
  rules.some((r) => r.spec?.pods?.some((p) => p.namespaceSelector !== undefined));

/** Whether any rule needs the Cluster's labels. */
export const needsClusterLabels = (rules: readonly MachineDrainRule[]) =>
  rules.some((r) => r.spec?.machines?.some((m) => m.clusterSelector !== undefined));

export interface RuleContext {
  machineLabels: Record<string, string>;
  clusterLabels: Record<string, string>;
  namespaceLabels: ReadonlyMap<string, Record<string, string>>;
}

/** The rule for one pod (undefined: none applies, drain it as usual). */
export function podRuleOf(
  pod: KubeObject,
  rules: readonly MachineDrainRule[],
  ctx: RuleContext,
): PodRule | undefined {
  const sorted = [...rules].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  for (const r of sorted) {
    const machines = r.spec?.machines;
    const pods = r.spec?.pods;
    const machineOk =
      !machines ||
      machines.some(
        (m) =>
          matchesSelector(m.selector, ctx.machineLabels) &&
          matchesSelector(m.clusterSelector, ctx.clusterLabels),
      );
    const nsLabels = ctx.namespaceLabels.get(pod.metadata.namespace ?? '') ?? {};
    const podOk =
      !pods ||
      pods.some(
        (p) =>
          matchesSelector(p.selector, pod.metadata.labels ?? {}) &&
          matchesSelector(p.namespaceSelector, nsLabels),
      );
    const behavior = r.spec?.drain?.behavior;
    if (!machineOk || !podOk || !behavior) continue;
    return {
      behavior,
      order: behavior === 'Drain' ? (r.spec?.drain?.order ?? 0) : 0,
      rule: `${r.metadata.namespace ?? ''}/${r.metadata.name ?? ''}`,
    };
  }
  return undefined;
}

// How a pass of the drain reconciler reads the claim's Node and its pods, one function per way of
// finding the Node (docs/drain.md "Finding the Node"): a Cluster API Machine, a Gardener MCM Machine,
// or the Node whose providerID names the claim. Each answers the workload client and what it saw.
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { KubeObject, OwnerReference } from '../../api/schema/meta.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { Core, type ResourceType } from '../../lib/kube/resources.js';
import type { WorkloadCluster } from '../../policies/schema.js';
import { claimProviderID } from '../../contract/names.js';
import type { WorkloadView } from './decide.js';
import { podKey } from './pods.js';
import { unreachable } from './pass.js';
import { nodeByProviderID, podsOnNode, type WorkloadClusters } from './workload.js';
import type { Node, Pdb } from './workload-types.js';
import { needsNamespaceLabels, podRuleOf, type PodRule } from './capi.js';
import { lookUpCapi, type CapiLookup } from './capi-source.js';
import { findMcmMachine, MCM_GROUP, MCM_VERSION, type McmMachine } from './mcm.js';

export interface Observed {
  client?: KubeClient;
  view: WorkloadView;
}

export interface ViewContext {
  metal: KubeClient;
  clusters: WorkloadClusters;
  /** The Node name seen last for this claim (tried first), and where to remember the one found. */
  hint?: string;
  remember: (node: string) => void;
}

export const McmMachineType: ResourceType = {
  group: MCM_GROUP,
  version: MCM_VERSION,
  kind: 'Machine',
  plural: 'machines',
  namespaced: true,
};

const providerIDOf = (claim: ServerClaim) =>
  claimProviderID(claim.metadata.namespace ?? '', claim.metadata.name ?? '');

/** The Node whose providerID names the claim, in the cluster the policy names for its namespace. */
export async function providerIDView(
  ctx: ViewContext,
  claim: ServerClaim,
  cluster: WorkloadCluster,
): Promise<Observed> {
  let client: KubeClient;
  try {
    client = await ctx.clusters.client(cluster);
  } catch (e) {
    return { view: unreachable(e as Error) };
  }
  const providerID = providerIDOf(claim);
  try {
    const node = await nodeByProviderID(client, providerID, ctx.hint);
    if (!node)
      return {
        client,
        view: { kind: 'no-node', message: `no Node in the workload cluster has providerID ${providerID}` },
      };
    ctx.remember(node.metadata.name ?? '');
    const pods = await podsOnNode(client, node.metadata.name ?? '');
    return {
      client,
      view: { kind: 'node', node, via: `providerID ${providerID}`, pods, capiManaged: false },
    };
  } catch (e) {
    return { client, view: unreachable(e as Error) };
  }
}

/**
 * The Node of the Gardener MCM Machine whose spec.providerID names the claim (its status.node), read
 * in the namespace the policy names, with the workload cluster's kubeconfig or the one given for the
 * Machines' cluster.
 */
export async function mcmView(
  ctx: ViewContext,
  claim: ServerClaim,
  cluster: WorkloadCluster,
): Promise<Observed> {
  const mcm = cluster.mcm!;
  let client: KubeClient;
  let machines: KubeClient;
  try {
    client = await ctx.clusters.client(cluster);
    machines = mcm.credentials
      ? await ctx.clusters.client({ namespace: cluster.namespace, ...mcm.credentials })
      : client;
  } catch (e) {
    return { view: unreachable(e as Error) };
  }
  try {
    const list = (await machines.resource<McmMachine>(McmMachineType).listAll({ namespace: mcm.namespace }))
      .items;
    const found = findMcmMachine(list, providerIDOf(claim), mcm.namespace);
    if (found.kind === 'missing') return { client, view: { kind: 'no-node', message: found.message } };
    const machine = `MCM Machine ${mcm.namespace}/${found.machine.metadata.name ?? ''}`;
    const node = await client.resource<Node>(Core.Node).find(found.nodeName);
    if (!node)
      return {
        client,
        view: { kind: 'no-node', message: `${machine}: its Node ${found.nodeName} does not exist` },
      };
    ctx.remember(found.nodeName);
    const pods = await podsOnNode(client, found.nodeName);
    const inPlaceUpdate = mcm.inPlaceUpdate === true;
    const pdbs: Pdb[] = [];
    // MCM evicts, so its refusals are not ours to see: the budgets say what holds it up.
    if (inPlaceUpdate)
      for (const ns of new Set(pods.map((p) => p.metadata.namespace ?? '')))
        pdbs.push(...(await client.resource<Pdb>(Core.PodDisruptionBudget).listAll({ namespace: ns })).items);
    return {
      client,
      view: {
        kind: 'node',
        node,
        via: `${machine} status.node`,
        pods,
        capiManaged: false,
        gardener: { inPlaceUpdate, ...(inPlaceUpdate ? { pdbs } : {}) },
      },
    };
  } catch (e) {
    return { client, view: unreachable(e as Error) };
  }
}

/** The Node of the claim's CAPI Machine (status.nodeRef), in its Cluster, with its MachineDrainRules. */
export async function capiView(
  ctx: ViewContext,
  claim: ServerClaim,
  infra: OwnerReference,
): Promise<Observed> {
  let client: KubeClient;
  let found: Extract<CapiLookup, { kind: 'found' }>;
  try {
    const r = await lookUpCapi(ctx.metal, claim, infra);
    if (r.kind === 'missing') return { view: { kind: 'no-node', message: r.message } };
    found = r;
    client = await ctx.clusters.client(r.credentials);
  } catch (e) {
    return { view: unreachable(e as Error) };
  }
  const machine = `Machine ${found.machine.metadata.namespace}/${found.machine.metadata.name}`;
  try {
    const node = await client.resource<Node>(Core.Node).find(found.nodeName);
    if (!node)
      return {
        view: { kind: 'no-node', message: `${machine}: its Node ${found.nodeName} does not exist` },
      };
    // Remembered like a providerID Node: after the maintenance, a pass still comes to uncordon it.
    ctx.remember(found.nodeName);
    const pods = await podsOnNode(client, found.nodeName);
    const namespaceLabels = new Map<string, Record<string, string>>();
    if (needsNamespaceLabels(found.rules))
      for (const ns of (await client.resource<KubeObject>(Core.Namespace).listAll()).items)
        namespaceLabels.set(ns.metadata.name ?? '', ns.metadata.labels ?? {});
    const rctx = {
      machineLabels: found.machine.metadata.labels ?? {},
      clusterLabels: found.clusterLabels,
      namespaceLabels,
    };
    const rules = new Map<string, PodRule>();
    for (const pod of pods) {
      const rule = podRuleOf(pod, found.rules, rctx);
      if (rule) rules.set(podKey(pod), rule);
    }
    return {
      client,
      view: { kind: 'node', node, via: `${machine} status.nodeRef`, pods, capiManaged: true, rules },
    };
  } catch (e) {
    return { view: unreachable(e as Error) };
  }
}

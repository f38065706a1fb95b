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
import type { Node, Pdb, Pod } from './workload-types.js';
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

type NodeView = Extract<WorkloadView, { kind: 'node' }>;
type Found = { node: Node; via: string } | { missing: string };

/**
 * What every way of finding the Node ends with: the Node `find` answers (or why there is none),
 * remembered so that a pass after the maintenance still comes to uncordon it, its pods, and what that
 * way adds to the view (`extras`, from those pods). A failed read is an unreachable cluster.
 */
async function nodeView(
  ctx: ViewContext,
  client: KubeClient,
  find: () => Promise<Found>,
  extras: (pods: Pod[]) => Promise<Pick<NodeView, 'capiManaged' | 'rules' | 'gardener'>>,
): Promise<Observed> {
  try {
    const found = await find();
    if ('missing' in found) return { client, view: { kind: 'no-node', message: found.missing } };
    const name = found.node.metadata.name ?? '';
    ctx.remember(name);
    const pods = await podsOnNode(client, name);
    return {
      client,
      view: { kind: 'node', node: found.node, via: found.via, pods, ...(await extras(pods)) },
    };
  } catch (e) {
    return { client, view: unreachable(e as Error) };
  }
}

/** The Node a Machine names, read by name. */
async function namedNode(client: KubeClient, machine: string, name: string, via: string): Promise<Found> {
  const node = await client.resource<Node>(Core.Node).find(name);
  return node ? { node, via } : { missing: `${machine}: its Node ${name} does not exist` };
}

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
  return nodeView(
    ctx,
    client,
    async () => {
      const node = await nodeByProviderID(client, providerID, ctx.hint);
      return node
        ? { node, via: `providerID ${providerID}` }
        : { missing: `no Node in the workload cluster has providerID ${providerID}` };
    },
    () => Promise.resolve({ capiManaged: false }),
  );
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
  const inPlaceUpdate = mcm.inPlaceUpdate === true;
  return nodeView(
    ctx,
    client,
    async () => {
      const list = (await machines.resource<McmMachine>(McmMachineType).listAll({ namespace: mcm.namespace }))
        .items;
      const found = findMcmMachine(list, providerIDOf(claim), mcm.namespace);
      if (found.kind === 'missing') return { missing: found.message };
      const machine = `MCM Machine ${mcm.namespace}/${found.machine.metadata.name ?? ''}`;
      return namedNode(client, machine, found.nodeName, `${machine} status.node`);
    },
    async (pods) => {
      if (!inPlaceUpdate) return { capiManaged: false, gardener: { inPlaceUpdate } };
      // MCM evicts, so its refusals are not ours to see: the budgets say what holds it up.
      const pdbs: Pdb[] = [];
      for (const ns of new Set(pods.map((p) => p.metadata.namespace ?? '')))
        pdbs.push(...(await client.resource<Pdb>(Core.PodDisruptionBudget).listAll({ namespace: ns })).items);
      return { capiManaged: false, gardener: { inPlaceUpdate, pdbs } };
    },
  );
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
  return nodeView(
    ctx,
    client,
    () => namedNode(client, machine, found.nodeName, `${machine} status.nodeRef`),
    async (pods) => {
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
      return { capiManaged: true, rules };
    },
  );
}

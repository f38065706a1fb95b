// A STAND-IN for cloud-provider-metal's maintenance label relay (the real CCM is not in the package
// registries here). It does exactly what ../shared/reference/upstream-metal-operator.md §2.4 says the
// CCM's node and serverclaim controllers do, and nothing more:
//   - mirrors `metal.ironcore.dev/maintenance-needed` from a ServerClaim onto the Node whose
//     spec.providerID is `metal://<claim-namespace>/<claim-name>` (set while the claim has it,
//     removed when it goes);
//   - sets `metal.ironcore.dev/maintenance-approved: "true"` on the claim iff the claim has
//     maintenance-needed AND that Node has maintenance-approved; removes it otherwise.
// It never cordons or drains (neither does the CCM). Its `maintenance-requested` path (a Node asking
// for a maintenance of the CCM's old kind) is left out: against our kind it needs a CCM change first
// (docs/proposals/ws6-upstream-consumers.md, Migration).
//
// Level-triggered like the CCM's controllers: every change of a claim or a Node, and a resync every
// second, reconciles every claim of the namespace. Writes are merge patches of labels, as the CCM's.
import type { KubeObject } from '../../api/schema/meta.js';
import type { ServerClaim } from '../../api/metal/v1alpha1/serverclaim.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { Informer } from '../../lib/kube/informer.js';
import { ServerClaimResource } from '../../lib/kube/kinds.js';
import { Core } from '../../lib/kube/resources.js';
import { claimProviderID } from '../../contract/names.js';
import { LEGACY_APPROVED_LABEL, LEGACY_NEEDED_LABEL } from '../../contract/legacy-labels.js';
import { KickLoop } from './kick.js';

interface Node extends KubeObject {
  spec?: { providerID?: string };
}

export interface CcmStandInWrites {
  nodeNeeded: number;
  claimApproved: number;
  claimUnapproved: number;
}

export class CcmStandIn {
  readonly #claims: Informer<ServerClaim>;
  readonly #nodes: Informer<Node>;
  readonly #metal: KubeClient;
  readonly #workload: KubeClient;
  #timer: NodeJS.Timeout | undefined;
  readonly #loop: KickLoop;
  /** What it wrote, for tests to show it took part. */
  readonly writes: CcmStandInWrites = { nodeNeeded: 0, claimApproved: 0, claimUnapproved: 0 };

  /** `metal`: an identity that may get, list, watch and patch the claims of `namespace`. */
  constructor(metal: KubeClient, workload: KubeClient, namespace: string) {
    this.#metal = metal;
    this.#workload = workload;
    this.#claims = new Informer<ServerClaim>(metal.resource<ServerClaim>(ServerClaimResource), { namespace });
    this.#nodes = new Informer<Node>(workload.resource<Node>(Core.Node));
    this.#loop = new KickLoop(async () => {
      for (const claim of this.#claims.list()) await this.#reconcile(claim).catch(() => undefined);
    });
    const kick = () => this.#loop.kick();
    for (const i of [this.#claims, this.#nodes] as Informer<KubeObject>[])
      i.on({ add: kick, update: kick, delete: kick });
  }

  async start(): Promise<void> {
    this.#claims.start();
    this.#nodes.start();
    await Promise.all([this.#claims.waitForSync(), this.#nodes.waitForSync()]);
    this.#timer = setInterval(() => this.#loop.kick(), 1000);
    this.#loop.kick();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#loop.idle();
    await Promise.all([this.#claims.stop(), this.#nodes.stop()]);
  }

  async #reconcile(claim: ServerClaim): Promise<void> {
    const { namespace = '', name = '' } = claim.metadata;
    const providerID = claimProviderID(namespace, name);
    const node = this.#nodes.list().find((n) => n.spec?.providerID === providerID);
    if (!node) return;
    const needed = claim.metadata.labels?.[LEGACY_NEEDED_LABEL] === 'true';
    // ServerClaim → Node: mirror maintenance-needed.
    const nodeNeeded = node.metadata.labels?.[LEGACY_NEEDED_LABEL] === 'true';
    if (needed !== nodeNeeded) {
      await this.#workload.resource<Node>(Core.Node).patch(node.metadata.name ?? '', {
        metadata: { labels: { [LEGACY_NEEDED_LABEL]: needed ? 'true' : null } },
      });
      this.writes.nodeNeeded++;
    }
    // Node → ServerClaim: approved iff needed on the claim and approved on the Node.
    const want = needed && node.metadata.labels?.[LEGACY_APPROVED_LABEL] === 'true';
    const has = claim.metadata.labels?.[LEGACY_APPROVED_LABEL] === 'true';
    if (want === has) return;
    await this.#metal
      .resource<ServerClaim>(ServerClaimResource)
      .patch(
        name,
        { metadata: { labels: { [LEGACY_APPROVED_LABEL]: want ? 'true' : null } } },
        { namespace },
      );
    if (want) this.writes.claimApproved++;
    else this.writes.claimUnapproved++;
  }
}

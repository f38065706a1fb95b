// The Sets' wiring: informers for the four *Set kinds (children, servers and BMCs come from the
// shared caches the firmware controller already holds), one work queue keyed `<Kind>/<name>`, and a
// reconcile that builds the decision's input from caches, creates children, changes holds, writes
// the counters (server-side apply on /status) and records Events. The rules are in decide.ts.
import { createHash } from 'node:crypto';
import type { BMC } from '../../../api/metal/v1alpha1/bmc.js';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import { matchesSelector } from '../../../contract/selectors.js';
import {
  isAlreadyExists,
  isNotFound,
  type Controller,
  type Informer,
  type Manager,
  type ResourceClient,
  type ResourceType,
} from '../../../lib/kube/index.js';
import {
  BMCResource,
  FirmwareResources,
  FirmwareSetResources,
  ServerResource,
} from '../../../lib/kube/kinds.js';
import { canonicalJSON } from '../../shared/canonical.js';
import { phaseOf } from '../draft.js';
import { pastGate } from '../hold.js';
import type { FirmwareObject } from '../model.js';
import { decideSet } from './decide.js';
import {
  HOLD_ANNOTATION,
  SET_SHAPES,
  TEMPLATE_HASH_ANNOTATION,
  type ChildView,
  type SetKindName,
  type SetObject,
} from './model.js';

type SetKube = SetObject & KubeObject;

function splitKey(key: string): { kind: SetKindName; name: string } {
  const i = key.indexOf('/');
  return { kind: key.slice(0, i) as SetKindName, name: key.slice(i + 1) };
}

const apiVersion = (rt: ResourceType) => `${rt.group}/${rt.version}`;

/** The Set's template for its child kind, `{}` when absent. */
function templateOf(kind: SetKindName, set: SetObject): Record<string, unknown> {
  return ((set.spec as Record<string, unknown>)[SET_SHAPES[kind].template] ?? {}) as Record<string, unknown>;
}

/** Hash of the Set's template, key order ignored: what TEMPLATE_HASH_ANNOTATION compares. */
export function templateHash(kind: SetKindName, set: SetObject): string {
  return createHash('sha256')
    .update(canonicalJSON(templateOf(kind, set)))
    .digest('hex')
    .slice(0, 16);
}

/** The decision's view of a child; `hash` is the Set's current template hash. */
export function childView(kind: SetKindName, child: FirmwareObject, hash: string): ChildView {
  const ref = (child.spec as unknown as Record<string, { name?: string } | undefined>)[
    SET_SHAPES[kind].targetRef
  ];
  // A done child whose spec changed since (re-stamped) is a new attempt the child controller has not
  // started yet: it counts as pending, so it holds its slot and is not counted as done.
  const changed = (child.metadata.generation ?? 0) > (child.status?.observedGeneration ?? 0);
  const settled = child.status?.state;
  const state = changed && (settled === 'Completed' || settled === 'Applied') ? 'Pending' : settled;
  const phase = phaseOf(child.status);
  const hold = child.metadata.annotations?.[HOLD_ANNOTATION];
  return {
    name: child.metadata.name ?? '',
    target: ref?.name ?? '',
    ...(state ? { state } : {}),
    started: pastGate(state, phase),
    ...(hold ? { hold } : {}),
    current: child.metadata.annotations?.[TEMPLATE_HASH_ANNOTATION] === hash,
  };
}

/**
 * The merge patch re-stamping `child` from the Set's template: the template's fields, null for a
 * field the template no longer has (the API server re-applies defaults), the target kept, the hash
 * and the hold in the same write.
 */
export function restampPatch(
  kind: SetKindName,
  set: SetObject,
  child: FirmwareObject,
  hold: string | null,
): Record<string, unknown> {
  const shape = SET_SHAPES[kind];
  const template = structuredClone(templateOf(kind, set));
  const removed = Object.keys(child.spec ?? {}).filter((k) => k !== shape.targetRef && !(k in template));
  return {
    metadata: {
      annotations: { [TEMPLATE_HASH_ANNOTATION]: templateHash(kind, set), [HOLD_ANNOTATION]: hold },
    },
    spec: { ...Object.fromEntries(removed.map((k) => [k, null])), ...template },
  };
}

/** A child stamped from the Set's template, owned by the Set (deleting the Set collects it). */
export function stampChild(
  kind: SetKindName,
  set: SetKube,
  name: string,
  target: string,
  hold: string | undefined,
): FirmwareObject {
  const shape = SET_SHAPES[kind];
  const childRt = FirmwareResources[shape.child];
  const setRt = FirmwareSetResources[kind];
  const template = structuredClone(templateOf(kind, set));
  return {
    apiVersion: apiVersion(childRt),
    kind: shape.child,
    metadata: {
      name,
      annotations: {
        [TEMPLATE_HASH_ANNOTATION]: templateHash(kind, set),
        ...(hold ? { [HOLD_ANNOTATION]: hold } : {}),
      },
      ownerReferences: [
        {
          apiVersion: apiVersion(setRt),
          kind,
          name: set.metadata.name ?? '',
          uid: set.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { ...template, [shape.targetRef]: { name: target } },
  } as unknown as FirmwareObject;
}

export class FirmwareSetController {
  readonly controller: Controller;
  readonly #mgr: Manager;
  readonly #clock: () => Date;
  readonly #sets = new Map<SetKindName, Informer<SetKube>>();
  readonly #setClients = new Map<SetKindName, ResourceClient<SetKube>>();
  readonly #children = new Map<SetKindName, Informer<FirmwareObject>>();
  readonly #childClients = new Map<SetKindName, ResourceClient<FirmwareObject>>();
  readonly #servers: Informer<Server>;
  readonly #bmcs: Informer<BMC>;

  /** Construct after FirmwareController: it declares the shared informers' indexers. */
  constructor(mgr: Manager, options: { workers?: number; clock?: () => Date } = {}) {
    this.#mgr = mgr;
    this.#clock = options.clock ?? (() => new Date());
    for (const [kind, rt] of Object.entries(FirmwareSetResources) as [SetKindName, ResourceType][]) {
      this.#sets.set(kind, mgr.informer<SetKube>(rt));
      this.#setClients.set(kind, mgr.client.resource<SetKube>(rt));
      const childRt = FirmwareResources[SET_SHAPES[kind].child];
      this.#children.set(kind, mgr.informer<FirmwareObject>(childRt));
      this.#childClients.set(kind, mgr.client.resource<FirmwareObject>(childRt));
    }
    this.#servers = mgr.informer<Server>(ServerResource);
    this.#bmcs = mgr.informer<BMC>(BMCResource);
    this.controller = mgr.controller({
      name: 'firmware-sets',
      workers: options.workers ?? 2,
      reconcile: (key) => this.reconcile(key),
    });
    this.#wire();
  }

  #wire(): void {
    for (const [kind, inf] of this.#sets) {
      const enqueue = (o: SetKube) => this.controller.enqueue(`${kind}/${o.metadata.name ?? ''}`);
      inf.on({ add: enqueue, update: (_, o) => enqueue(o) });
    }
    // A child's change wakes its Set (each child kind belongs to exactly one Set kind).
    for (const [kind, inf] of this.#children) {
      const byOwner = (c: FirmwareObject) => {
        const owner = c.metadata.ownerReferences?.find((r) => r.kind === kind && r.controller);
        if (owner) this.controller.enqueue(`${kind}/${owner.name}`);
      };
      inf.on({ add: byOwner, update: (_, c) => byOwner(c), delete: byOwner });
    }
    // A target's labels decide selection: wake the Sets that select that kind of target.
    const wakeAll = (selector: 'serverSelector' | 'bmcSelector') => () => {
      for (const [kind, inf] of this.#sets)
        if (SET_SHAPES[kind].selector === selector)
          for (const s of inf.list()) this.controller.enqueue(`${kind}/${s.metadata.name ?? ''}`);
    };
    const labelsChanged = (a: KubeObject, b: KubeObject) =>
      JSON.stringify(a.metadata.labels ?? {}) !== JSON.stringify(b.metadata.labels ?? {});
    const onServers = wakeAll('serverSelector');
    this.#servers.on({
      add: onServers,
      delete: onServers,
      update: (a, b) => labelsChanged(a, b) && onServers(),
    });
    const onBmcs = wakeAll('bmcSelector');
    this.#bmcs.on({ add: onBmcs, delete: onBmcs, update: (a, b) => labelsChanged(a, b) && onBmcs() });
  }

  #targets(kind: SetKindName, set: SetKube): string[] {
    const shape = SET_SHAPES[kind];
    const selector = set.spec[shape.selector];
    const pool: KubeObject[] = shape.selector === 'serverSelector' ? this.#servers.list() : this.#bmcs.list();
    return pool
      .filter((o) => !o.metadata.deletionTimestamp && matchesSelector(selector, o.metadata.labels))
      .map((o) => o.metadata.name ?? '');
  }

  async reconcile(key: string): Promise<void> {
    const { kind, name } = splitKey(key);
    const set = this.#sets.get(kind)?.getByName(name);
    if (!set || set.metadata.deletionTimestamp) return;
    const uid = set.metadata.uid;
    const hash = templateHash(kind, set);
    const owned = this.#children
      .get(kind)!
      .list()
      .filter((c) => c.metadata.ownerReferences?.some((r) => r.uid === uid && r.controller));
    const children = owned.map((c) => childView(kind, c, hash));
    const decision = decideSet({
      kind,
      set,
      targets: this.#targets(kind, set),
      children,
      now: this.#clock(),
    });
    const childClient = this.#childClients.get(kind)!;
    const fieldManager = this.#mgr.status.fieldManager;
    for (const c of decision.create) {
      try {
        await childClient.create(stampChild(kind, set, c.name, c.target, c.hold));
      } catch (e) {
        // Ours from an earlier step the cache does not show yet, or someone else's: the next
        // reconcile counts only what the Set owns.
        if (!isAlreadyExists(e)) throw e;
      }
    }
    for (const h of decision.holds) {
      try {
        await childClient.patch(
          h.name,
          { metadata: { annotations: { [HOLD_ANNOTATION]: h.hold } } },
          { type: 'merge', fieldManager },
        );
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    for (const r of decision.restamp) {
      const child = owned.find((c) => c.metadata.name === r.name);
      if (!child) continue;
      try {
        await childClient.patch(r.name, restampPatch(kind, set, child, r.hold), {
          type: 'merge',
          fieldManager,
        });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    const client = this.#setClients.get(kind)!;
    if (JSON.stringify(decision.status) !== JSON.stringify(set.status ?? {}))
      await this.#mgr.status.applyStatus(client, { name }, decision.status);
    const regarding = { ...set, apiVersion: apiVersion(FirmwareSetResources[kind]), kind };
    for (const ev of decision.events)
      this.#mgr.events.record(regarding, ev.type, ev.reason, 'FirmwareSet', ev.note);
  }
}

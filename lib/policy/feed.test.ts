import { DEFAULT_POLICY } from '../../policies/schema.js';
import type { InformerHandlers } from '../kube/informer.js';
import {
  feedPolicy,
  policyInformerOptions,
  policyRef,
  type ConfigMapObject,
  type PolicySource,
} from './feed.js';
import { PolicyStore } from './store.js';

/** An informer stand-in: the test decides what exists at sync and sends events afterwards. */
class FakeSource implements PolicySource {
  readonly handlers: InformerHandlers<ConfigMapObject>[] = [];
  readonly objects = new Map<string, ConfigMapObject>();
  #sync!: () => void;
  readonly #synced = new Promise<void>((resolve) => (this.#sync = resolve));

  on(h: InformerHandlers<ConfigMapObject>) {
    this.handlers.push(h);
  }
  waitForSync() {
    return this.#synced;
  }
  getByName(name: string, namespace?: string) {
    return this.objects.get(`${namespace}/${name}`);
  }
  sync() {
    this.#sync();
  }
  put(cm: ConfigMapObject) {
    const key = `${cm.metadata.namespace}/${cm.metadata.name}`;
    const old = this.objects.get(key);
    this.objects.set(key, cm);
    for (const h of this.handlers) {
      if (old) h.update?.(old, cm);
      else h.add?.(cm);
    }
  }
  remove(cm: ConfigMapObject) {
    this.objects.delete(`${cm.metadata.namespace}/${cm.metadata.name}`);
    for (const h of this.handlers) h.delete?.(cm);
  }
}

const cm = (text: string, rv: string, name = 'metal-maintenance-policy'): ConfigMapObject => ({
  metadata: { namespace: 'metal-maintenance-system', name, resourceVersion: rv },
  data: { 'policy.yaml': text },
});

describe('feedPolicy', () => {
  it('loads the ConfigMap, refuses an invalid update and keeps the policy when it is deleted', async () => {
    const source = new FakeSource();
    const store = new PolicyStore();
    const feed = feedPolicy(source, store);
    expect(feed.readiness.check()).toBe('no valid maintenance policy loaded');
    source.put(cm('grants: {ttl: 3m}', '1'));
    source.sync();
    await feed.synced;
    expect(store.current()?.grants.ttl).toBe('3m');
    expect(feed.readiness.check()).toBe(true);

    source.put(cm('grants: {ttl: soon}', '2'));
    expect(store.current()?.grants.ttl).toBe('3m');
    expect(store.lastRejection()?.errors[0]?.field).toBe('grants.ttl');

    source.put(cm('grants: {ttl: 4m}', '3'));
    expect(store.current()?.grants.ttl).toBe('4m');
    source.remove(cm('', '4'));
    expect(store.current()?.grants.ttl).toBe('4m');
  });

  it('ignores other ConfigMaps the informer may carry', async () => {
    const source = new FakeSource();
    const store = new PolicyStore();
    const feed = feedPolicy(source, store, { whenMissing: 'none' });
    source.put(cm('grants: {ttl: 3m}', '1', 'something-else'));
    source.sync();
    await feed.synced;
    expect(store.isLoaded()).toBe(false);
  });

  it('puts the built-in defaults in force when the ConfigMap does not exist at sync', async () => {
    const source = new FakeSource();
    const store = new PolicyStore();
    const feed = feedPolicy(source, store);
    source.sync();
    await feed.synced;
    expect(store.current()).toBe(DEFAULT_POLICY);
    // A ConfigMap created later replaces them.
    source.put(cm('legacyLabels: {mode: deny}', '5'));
    expect(store.current()?.legacyLabels.mode).toBe('deny');
  });

  it('with whenMissing none stays unloaded (not ready) without a ConfigMap', async () => {
    const source = new FakeSource();
    const store = new PolicyStore();
    const feed = feedPolicy(source, store, { whenMissing: 'none' });
    source.sync();
    await feed.synced;
    expect(store.isLoaded()).toBe(false);
    expect(feed.readiness.check()).not.toBe(true);
  });

  it('does not fall back to defaults when the ConfigMap exists but is invalid', async () => {
    const source = new FakeSource();
    const store = new PolicyStore();
    const feed = feedPolicy(source, store);
    source.put(cm('grants: {ttl: soon}', '1'));
    source.sync();
    await feed.synced;
    expect(store.isLoaded()).toBe(false);
  });

  it('watches exactly the named ConfigMap', () => {
    const ref = policyRef({ name: 'p' });
    expect(ref).toEqual({ namespace: 'metal-maintenance-system', name: 'p', key: 'policy.yaml' });
    expect(policyInformerOptions(ref)).toEqual({
      namespace: 'metal-maintenance-system',
      fieldSelector: 'metadata.name=p',
    });
  });
});

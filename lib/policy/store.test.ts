import { jest } from '@jest/globals';
import { DEFAULT_POLICY, type Policy } from '../../policies/schema.js';
import { PolicyStore } from './store.js';

const cm = (text: string, rv = '1') => ({
  metadata: { namespace: 'metal-maintenance-system', name: 'metal-maintenance-policy', resourceVersion: rv },
  data: { 'policy.yaml': text },
});

describe('PolicyStore', () => {
  it('is not loaded until a policy arrives, unless it starts from one', () => {
    expect(new PolicyStore().isLoaded()).toBe(false);
    expect(new PolicyStore({ initial: DEFAULT_POLICY }).current()).toBe(DEFAULT_POLICY);
  });

  it('accepts a valid update and notifies listeners with the previous policy', () => {
    const store = new PolicyStore({ initial: DEFAULT_POLICY });
    const seen: [Policy, Policy | undefined][] = [];
    store.onChange((p, prev) => seen.push([p, prev]));
    expect(store.update(cm('grants: {ttl: 3m}'))).toEqual({ ok: true, changed: true });
    expect(store.current()?.grants.ttl).toBe('3m');
    expect(seen).toHaveLength(1);
    expect(seen[0]![1]).toBe(DEFAULT_POLICY);
  });

  it('does not notify for a resync of the same text', () => {
    const store = new PolicyStore();
    const listener = jest.fn();
    store.onChange(listener);
    store.update(cm('grants: {ttl: 3m}', '1'));
    expect(store.update(cm('grants: {ttl: 3m}', '2'))).toEqual({ ok: true, changed: false });
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('refuses an invalid update, keeps the last good policy and reports why', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const store = new PolicyStore({ clock: () => at });
    store.update(cm('grants: {ttl: 3m}'));
    const good = store.current();
    const rejected = jest.fn();
    const changed = jest.fn();
    store.onRejected(rejected);
    store.onChange(changed);
    const result = store.update(cm('grants: {ttl: soon}', '7'));
    expect(result).toEqual({
      ok: false,
      kept: true,
      errors: [expect.objectContaining({ field: 'grants.ttl' })],
    });
    expect(store.current()).toBe(good);
    expect(changed).not.toHaveBeenCalled();
    expect(rejected).toHaveBeenCalledWith({
      errors: [expect.objectContaining({ field: 'grants.ttl' })],
      source: 'metal-maintenance-system/metal-maintenance-policy@7',
      at,
    });
    expect(store.lastRejection()?.source).toContain('@7');
    store.update(cm('grants: {ttl: 4m}', '8'));
    expect(store.lastRejection()).toBeUndefined();
  });

  it('reports that nothing is in force when the first policy is invalid', () => {
    const store = new PolicyStore();
    expect(store.update(cm('kind: Other'))).toMatchObject({ ok: false, kept: false });
    expect(store.isLoaded()).toBe(false);
  });

  it('survives a throwing listener and unsubscribes', () => {
    const store = new PolicyStore();
    const after = jest.fn();
    const off = store.onChange(() => {
      throw new Error('boom');
    });
    store.onChange(after);
    store.update(cm('grants: {ttl: 3m}'));
    expect(after).toHaveBeenCalledTimes(1);
    off();
    store.set(DEFAULT_POLICY);
    expect(after).toHaveBeenCalledTimes(2);
    expect(store.current()).toBe(DEFAULT_POLICY);
  });
});

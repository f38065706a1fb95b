import { describe, expect, it } from '@jest/globals';
import { findMcmMachine, machineNodeOf, type McmMachine } from './mcm.js';

const NS = 'shoot--tenant--prod';
const PID = 'metal://tenant/claim-0';

const machine = (name: string, over: Partial<McmMachine> = {}, meta: Partial<McmMachine['metadata']> = {}) =>
  ({
    metadata: { name, namespace: NS, creationTimestamp: '2026-08-01T00:00:00Z', ...meta },
    spec: { providerID: PID },
    status: { node: `node-${name}` },
    ...over,
  }) as McmMachine;

describe('machineNodeOf', () => {
  it('reads status.node first, then the node label MCM sets', () => {
    expect(machineNodeOf(machine('a'))).toBe('node-a');
    expect(machineNodeOf(machine('a', { status: {} }, { labels: { node: 'from-label' } }))).toBe(
      'from-label',
    );
    expect(machineNodeOf(machine('a', { status: { node: '' } }))).toBeUndefined();
  });
});

describe('findMcmMachine', () => {
  it('finds the Machine by spec.providerID, not by name', () => {
    const other = machine('other', { spec: { providerID: 'metal://tenant/claim-1' } });
    const r = findMcmMachine([other, machine('m')], PID, NS);
    expect(r).toMatchObject({ kind: 'found', nodeName: 'node-m', machine: { metadata: { name: 'm' } } });
  });

  it('names the missing link: no Machine, or no Node yet', () => {
    expect(findMcmMachine([], PID, NS)).toEqual({
      kind: 'missing',
      message: `no MCM Machine in ${NS} has spec.providerID ${PID}`,
    });
    expect(findMcmMachine([machine('m', { status: {} })], PID, NS)).toEqual({
      kind: 'missing',
      message: `MCM Machine ${NS}/m has no status.node yet`,
    });
  });

  it('prefers a live Machine over one being deleted, then the oldest', () => {
    const leaving = machine('a', {}, { deletionTimestamp: '2026-08-02T00:00:00Z' });
    const newer = machine('c', {}, { creationTimestamp: '2026-08-03T00:00:00Z' });
    const older = machine('d', {}, { creationTimestamp: '2026-08-02T00:00:00Z' });
    const r = findMcmMachine([leaving, newer, older], PID, NS);
    expect(r.kind === 'found' && r.machine.metadata.name).toBe('d');
    const only = findMcmMachine([leaving], PID, NS);
    expect(only.kind === 'found' && only.nodeName).toBe('node-a');
  });
});

import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../api/schema/meta.js';
import { DEFAULT_POLICY } from '../../policies/schema.js';
import {
  infraMachineOf,
  kubeconfigSecretOf,
  machineOf,
  pluralOf,
  podRuleOf,
  type MachineDrainRule,
  type PodRule,
  type RuleContext,
} from './capi.js';
import { planDrain, type DrainInput } from './decide.js';
import type { Pod } from './workload-types.js';

const NOW = Date.parse('2026-08-21T22:00:00Z');

const pod = (name: string, labels: Record<string, string>, namespace = 'shop'): Pod => ({
  metadata: {
    name,
    namespace,
    uid: name,
    labels,
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs', controller: true }],
  },
  spec: { nodeName: 'n1' },
  status: { phase: 'Running' },
});

const rule = (name: string, spec: MachineDrainRule['spec']): MachineDrainRule => ({
  metadata: { name, namespace: 'tenant' },
  spec,
});

const ctx = (over: Partial<RuleContext> = {}): RuleContext => ({
  machineLabels: { pool: 'workers' },
  clusterLabels: { stage: 'production' },
  namespaceLabels: new Map([
    ['shop', { team: 'shop' }],
    ['monitoring', { team: 'obs' }],
  ]),
  ...over,
});

describe('the CAPI chain', () => {
  it('follows claim → infrastructure machine → Machine → the Cluster kubeconfig Secret', () => {
    const claim: KubeObject = {
      metadata: {
        name: 'c1',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'x', uid: '1' },
          {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
            kind: 'IroncoreMetalMachine',
            name: 'imm',
            uid: '2',
            controller: true,
          },
        ],
      },
    };
    expect(infraMachineOf(claim)?.name).toBe('imm');
    expect(infraMachineOf({ metadata: { name: 'plain' } })).toBeUndefined();
    const infra: KubeObject = {
      metadata: {
        name: 'imm',
        ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: 'm-0', uid: '3' }],
      },
    };
    expect(machineOf(infra)?.name).toBe('m-0');
    expect(pluralOf('IroncoreMetalMachine')).toBe('ironcoremetalmachines');
    expect(kubeconfigSecretOf({ metadata: {}, spec: { clusterName: 'shoot' } })).toBe('shoot-kubeconfig');
    expect(kubeconfigSecretOf({ metadata: {} })).toBeUndefined();
  });
});

describe('MachineDrainRules', () => {
  it('apply by machine, cluster, pod and namespace selectors; the first by name wins', () => {
    const rules = [
      rule('b-skip-logging', {
        drain: { behavior: 'Skip' },
        pods: [{ selector: { matchLabels: { app: 'logging' } } }],
      }),
      rule('a-wait-prom', {
        drain: { behavior: 'WaitCompleted' },
        machines: [{ clusterSelector: { matchLabels: { stage: 'production' } } }],
        pods: [{ namespaceSelector: { matchLabels: { team: 'obs' } } }],
      }),
      rule('c-late', {
        drain: { behavior: 'Drain', order: 10 },
        pods: [{ selector: { matchLabels: { app: 'db' } } }],
      }),
    ];
    expect(podRuleOf(pod('l', { app: 'logging' }), rules, ctx())).toMatchObject({ behavior: 'Skip' });
    // In namespace monitoring: a-wait-prom matches first (by name), before b-skip-logging.
    expect(podRuleOf(pod('p', { app: 'logging' }, 'monitoring'), rules, ctx())).toEqual({
      behavior: 'WaitCompleted',
      order: 0,
      rule: 'tenant/a-wait-prom',
    });
    // Not in production: the cluster selector fails, so the next rule decides.
    const staging = ctx({ clusterLabels: { stage: 'staging' } });
    expect(podRuleOf(pod('p', { app: 'logging' }, 'monitoring'), rules, staging)?.behavior).toBe('Skip');
    expect(podRuleOf(pod('d', { app: 'db' }), rules, ctx())).toMatchObject({ behavior: 'Drain', order: 10 });
    expect(podRuleOf(pod('w', { app: 'web' }), rules, ctx())).toBeUndefined();
  });

  it('drain lower orders first, skip and wait as told, and the pod label wins over a rule', () => {
    const pods = [
      pod('web', { app: 'web' }),
      pod('db', { app: 'db' }),
      pod('logs', { app: 'logging' }),
      pod('job', { app: 'job' }),
      pod('pinned', { app: 'db', 'cluster.x-k8s.io/drain': 'skip' }),
    ];
    const rules = new Map<string, PodRule>([
      ['shop/db', { behavior: 'Drain', order: 10, rule: 'tenant/late' }],
      ['shop/pinned', { behavior: 'Drain', order: 10, rule: 'tenant/late' }],
      ['shop/logs', { behavior: 'Skip', order: 0, rule: 'tenant/skip' }],
      ['shop/job', { behavior: 'WaitCompleted', order: 0, rule: 'tenant/wait' }],
    ]);
    const input = (list: Pod[]): DrainInput => ({
      claim: {
        metadata: { name: 'c1', namespace: 'tenant' },
        spec: { power: 'On', image: 'img' },
        status: {
          maintenance: {
            announcements: [
              {
                maintenanceUID: 'u1',
                maintenanceName: 'm1',
                maintenanceNamespace: 'ops',
                reason: 'FirmwareUpdate',
                class: 'Planned',
                announcedAt: new Date(NOW - 60_000).toISOString(),
                state: 'Announced',
              },
            ],
          },
        },
      },
      maintenances: new Map(),
      view: {
        kind: 'node',
        node: { metadata: { name: 'n1' }, spec: {} },
        via: 'Machine',
        pods: list,
        capiManaged: true,
        rules,
      },
      refusals: new Map(),
      policy: DEFAULT_POLICY.drain,
      now: NOW,
    });
    const first = planDrain(input(pods));
    expect(first.evict.map((p) => p.metadata.name)).toEqual(['web']);
    expect(first.left).toEqual(['shop/web', 'shop/db', 'shop/job']);
    expect(first.held.get('shop/job')).toContain('WaitCompleted');
    // Once web is gone, order 10 follows.
    const second = planDrain(input(pods.filter((p) => p.metadata.name !== 'web')));
    expect(second.evict.map((p) => p.metadata.name)).toEqual(['db']);
  });
});

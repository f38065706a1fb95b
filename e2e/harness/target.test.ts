// The target switch of the e2e suites: local by default, cluster only with a usable KUBECONFIG, and
// local-only parts of a suite's world fail loudly in cluster mode.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  TargetError,
  clusterKubeconfig,
  e2eTarget,
  inCluster,
  localOnly,
  localTargetOnly,
} from './target.js';

describe('e2eTarget', () => {
  it('is local unless E2E_TARGET says cluster, and refuses anything else', () => {
    expect(e2eTarget({})).toBe('local');
    expect(e2eTarget({ E2E_TARGET: 'cluster' })).toBe('cluster');
    expect(inCluster({ E2E_TARGET: 'local' })).toBe(false);
    expect(() => e2eTarget({ E2E_TARGET: 'kind' })).toThrow(TargetError);
  });
});

describe('clusterKubeconfig', () => {
  it('takes one existing file from KUBECONFIG, and says what is wrong otherwise', () => {
    const dir = mkdtempSync(join(tmpdir(), 'metal-target-'));
    try {
      const file = join(dir, 'kubeconfig');
      writeFileSync(file, 'apiVersion: v1\nkind: Config\n');
      expect(clusterKubeconfig({ KUBECONFIG: file })).toBe(file);
      expect(() => clusterKubeconfig({})).toThrow(/needs KUBECONFIG/);
      expect(() => clusterKubeconfig({ KUBECONFIG: `${file}:${file}` })).toThrow(/one file, not a list/);
      expect(() => clusterKubeconfig({ KUBECONFIG: join(dir, 'missing') })).toThrow(/no such file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('localOnly', () => {
  it('fails on any property with a coded error naming the property and why', () => {
    const controllers = localOnly<Record<string, { logs: unknown[] }>>(
      'lc.controllers',
      'pods have no logs here',
    );
    let caught: unknown;
    try {
      void controllers['approval-controller'];
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(TargetError);
    expect((caught as TargetError).code).toBe('METAL_E2E_TARGET');
    expect((caught as Error).message).toBe(
      'lc.controllers.approval-controller exists only with E2E_TARGET=local: pods have no logs here',
    );
    // Not a thenable: awaiting it does not throw by itself.
    expect((controllers as unknown as { then?: unknown }).then).toBeUndefined();
  });
});

describe('localTargetOnly', () => {
  it('fails in cluster mode naming the file and why, and does nothing locally', () => {
    expect(() => localTargetOnly('x.e2e.test.ts', 'it starts its own cert-manager', {})).not.toThrow();
    expect(() =>
      localTargetOnly('x.e2e.test.ts', 'it starts its own cert-manager', { E2E_TARGET: 'cluster' }),
    ).toThrow(/x\.e2e\.test\.ts runs only with E2E_TARGET=local .*its own cert-manager/);
  });
});

// Where the plugin looks for a kubeconfig, and what it says when there is none or the context is wrong.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, kubeconfigFiles } from './kube.js';

const dir = mkdtempSync(join(tmpdir(), 'kubectl-metal-kube-test-'));
const home = join(dir, 'home');
const config = join(dir, 'config');
writeFileSync(
  config,
  [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
    'users: [{name: u, user: {token: t}}]',
    'contexts: [{name: dev, context: {cluster: c, user: u}}, {name: prod, context: {cluster: c, user: u}}]',
    'current-context: dev',
  ].join('\n'),
);

describe('kubeconfigFiles', () => {
  it('names every place it looked when there is no kubeconfig', () => {
    expect(() => kubeconfigFiles({}, { env: {}, home })).toThrow(
      `no kubeconfig found; looked in $KUBECONFIG (unset), ${join(home, '.kube', 'config')} (no such file), in-cluster (KUBERNETES_SERVICE_HOST unset). Pass --kubeconfig PATH or set KUBECONFIG`,
    );
  });
  it('names a $KUBECONFIG that points nowhere', () => {
    expect(() => kubeconfigFiles({}, { env: { KUBECONFIG: join(dir, 'gone') }, home })).toThrow(
      `$KUBECONFIG (${join(dir, 'gone')}: no such file)`,
    );
  });
  it('names a --kubeconfig that does not exist', () => {
    expect(() => kubeconfigFiles({ kubeconfig: join(dir, 'nope') }, { env: {}, home })).toThrow(
      `--kubeconfig ${join(dir, 'nope')}: no such file`,
    );
  });
  it('takes --kubeconfig, then $KUBECONFIG', () => {
    expect(kubeconfigFiles({ kubeconfig: config }, { env: {}, home })).toEqual([config]);
    expect(kubeconfigFiles({}, { env: { KUBECONFIG: config }, home })).toEqual([config]);
  });
});

describe('connect', () => {
  it('says which contexts the kubeconfig has when --context names none of them', async () => {
    await expect(connect({ kubeconfig: config, context: 'nosuch' }, { env: {}, home })).rejects.toThrow(
      `context "nosuch" is not in ${config}; it has "dev", "prod"`,
    );
  });
});

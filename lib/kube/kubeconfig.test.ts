// Where a binary's API access comes from: kubeconfig documents with static credentials, relative
// file references, rotating token files, the untrusted mode a workload cluster's Secret gets, an
// exec plugin through client-node, and the pod's ServiceAccount.
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { isMetalError } from '../errors.js';
import {
  accessFromEnvironment,
  accessFromFile,
  accessFromKubeconfig,
  inClusterAccess,
  KUBECONFIG_ERROR,
} from './kubeconfig.js';

const CA = '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');

function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443/', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'ctx',
  });
}

const dir = () => mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));

async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!isMetalError(e, KUBECONFIG_ERROR)) throw new Error(`expected ${KUBECONFIG_ERROR}, got ${String(e)}`);
  return e.message;
}

describe('accessFromKubeconfig', () => {
  it('a token and inline CA: the server without its trailing slash, the CA as PEM, a bearer header', async () => {
    const access = await accessFromKubeconfig(
      kubeconfig({ token: 'abc' }, { 'certificate-authority-data': b64(CA), 'tls-server-name': 'api' }),
    );
    expect(access.server).toBe('https://127.0.0.1:6443');
    expect(access.tls).toEqual({ ca: CA, rejectUnauthorized: true, servername: 'api' });
    expect(await access.credentials()).toEqual({ authorization: 'Bearer abc' });
  });

  it('client certificate files resolve against the kubeconfig file’s directory', async () => {
    const d = dir();
    mkdirSync(join(d, 'pki'));
    writeFileSync(join(d, 'pki', 'ca.crt'), CA);
    writeFileSync(join(d, 'pki', 'admin.crt'), 'CERT');
    writeFileSync(join(d, 'pki', 'admin.key'), 'KEY');
    writeFileSync(
      join(d, 'config'),
      kubeconfig(
        { 'client-certificate': 'pki/admin.crt', 'client-key': 'pki/admin.key' },
        { 'certificate-authority': 'pki/ca.crt' },
      ),
    );
    const access = await accessFromFile(join(d, 'config'));
    expect(access.tls).toMatchObject({ ca: CA, cert: 'CERT', key: 'KEY' });
    expect(await access.credentials()).toEqual({});
  });

  it('a token file is read again on each call (the kubelet rotates it)', async () => {
    const d = dir();
    writeFileSync(join(d, 'token'), 'first\n');
    writeFileSync(join(d, 'config'), kubeconfig({ tokenFile: 'token' }));
    const access = await accessFromFile(join(d, 'config'));
    expect(await access.credentials()).toEqual({ authorization: 'Bearer first' });
    writeFileSync(join(d, 'token'), 'second');
    expect(await access.credentials()).toEqual({ authorization: 'Bearer second' });
  });

  it('basic auth, and insecure-skip-tls-verify', async () => {
    const access = await accessFromKubeconfig(
      kubeconfig({ username: 'ada', password: 'pw' }, { 'insecure-skip-tls-verify': true }),
    );
    expect(access.tls.rejectUnauthorized).toBe(false);
    expect(await access.credentials()).toEqual({ authorization: `Basic ${b64('ada:pw')}` });
  });

  it('a broken document is refused naming what is missing, never quoting it', async () => {
    expect(await refusal(accessFromKubeconfig('token: s3cret: [', { source: 'Secret a/b key c' }))).toBe(
      'Secret a/b key c: not valid YAML',
    );
    expect(await refusal(accessFromKubeconfig(stringify({ users: [] })))).toContain('no current-context');
    const noCluster = stringify({
      'current-context': 'x',
      contexts: [{ name: 'x', context: { cluster: 'gone' } }],
    });
    expect(await refusal(accessFromKubeconfig(noCluster))).toContain(
      'context "x" names no cluster with a server',
    );
    expect(
      await refusal(accessFromKubeconfig(kubeconfig({ 'client-certificate-data': b64('C') }))),
    ).toContain('needs both the certificate and its key');
    expect(await refusal(accessFromFile(join(dir(), 'nope')))).toContain('no such file');
    expect(
      await refusal(accessFromKubeconfig(kubeconfig({ token: 't' }, { 'proxy-url': 'http://proxy:3128' }))),
    ).toContain('proxy-url is not supported');
  });

  it('untrusted (a workload cluster’s Secret): no files, no token files, no plugins', async () => {
    const untrusted = { untrusted: true, source: 'Secret ns/kc key value' };
    expect(
      await refusal(accessFromKubeconfig(kubeconfig({ tokenFile: '/var/run/secrets/t' }), untrusted)),
    ).toBe('Secret ns/kc key value: tokenFile names a file; only inline data is allowed here');
    expect(
      await refusal(accessFromKubeconfig(kubeconfig({}, { 'certificate-authority': '/etc/ca' }), untrusted)),
    ).toContain('certificate-authority names a file');
    const exec = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh' } };
    expect(await refusal(accessFromKubeconfig(kubeconfig(exec), untrusted))).toContain(
      'exec is not allowed here',
    );
    const inline = await accessFromKubeconfig(
      kubeconfig({ token: 't' }, { 'certificate-authority-data': b64(CA) }),
      untrusted,
    );
    expect(inline.tls.ca).toBe(CA);
  });

  it('an exec plugin goes through client-node, which runs it for the token', async () => {
    const d = dir();
    const plugin = join(d, 'plugin.sh');
    const credential = {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'from-exec' },
    };
    writeFileSync(plugin, `#!/bin/sh\necho '${JSON.stringify(credential)}'\n`);
    chmodSync(plugin, 0o755);
    const access = await accessFromKubeconfig(
      kubeconfig({
        exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' },
      }),
    );
    expect(access.server).toBe('https://127.0.0.1:6443');
    expect(await access.credentials()).toEqual({ authorization: 'Bearer from-exec' });
  });
});

describe('inClusterAccess', () => {
  function serviceAccount(): string {
    const d = dir();
    writeFileSync(join(d, 'token'), 'sa-1');
    writeFileSync(join(d, 'ca.crt'), CA);
    return d;
  }

  it('KUBERNETES_SERVICE_HOST/PORT, the mounted CA, the token read again on each call', async () => {
    const d = serviceAccount();
    const access = inClusterAccess(
      { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' },
      d,
    );
    expect(access.server).toBe('https://10.96.0.1:443');
    expect(access.tls).toEqual({ ca: CA, rejectUnauthorized: true });
    expect(await access.credentials()).toEqual({ authorization: 'Bearer sa-1' });
    writeFileSync(join(d, 'token'), 'sa-2');
    expect(await access.credentials()).toEqual({ authorization: 'Bearer sa-2' });
  });

  it('an IPv6 service host is bracketed; a missing environment or token is a coded error', async () => {
    const d = serviceAccount();
    expect(
      inClusterAccess({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, d).server,
    ).toBe('https://[fd00::1]:443');
    expect(await refusal(Promise.resolve().then(() => inClusterAccess({}, d)))).toContain(
      'KUBERNETES_SERVICE_HOST',
    );
    const env = { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' };
    expect(await refusal(Promise.resolve().then(() => inClusterAccess(env, dir())))).toContain('token file');
  });
});

describe('accessFromEnvironment', () => {
  it('$KUBECONFIG, else ~/.kube/config, else the in-cluster ServiceAccount', async () => {
    const d = dir();
    writeFileSync(join(d, 'a'), kubeconfig({ token: 'from-env' }));
    const fromEnv = await accessFromEnvironment({ KUBECONFIG: join(d, 'a'), HOME: d });
    expect(await fromEnv.credentials()).toEqual({ authorization: 'Bearer from-env' });
    mkdirSync(join(d, '.kube'));
    writeFileSync(join(d, '.kube', 'config'), kubeconfig({ token: 'from-home' }));
    const fromHome = await accessFromEnvironment({ HOME: d });
    expect(await fromHome.credentials()).toEqual({ authorization: 'Bearer from-home' });
    expect(await refusal(accessFromEnvironment({ HOME: dir() }))).toContain('the in-cluster ServiceAccount');
  });
});

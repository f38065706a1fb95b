// The stand-in kubelet's pure decisions on a pod as the API server stores it (testdata/webhook-pod.yaml):
// the container's process, its volumes, and the status it reports.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  PodPlanError,
  containerPlan,
  expand,
  podStatus,
  restartDelayMs,
  volumePlans,
  type PodHost,
  type PodObject,
} from './pod-plan.js';

const fixture = (): PodObject =>
  parse(readFileSync(join(import.meta.dirname, 'testdata', 'webhook-pod.yaml'), 'utf8')) as PodObject;
const host: PodHost = {
  podIP: '10.244.0.7',
  hostIP: '10.244.0.1',
  apiserverHost: '127.0.0.1',
  apiserverPort: 6443,
};

describe('containerPlan', () => {
  it('runs the container command under node with expanded args and the listeners on the pod address', () => {
    const pod = fixture();
    const plan = containerPlan(pod, pod.spec.containers[0]!, host);
    expect(plan.argv).toEqual([
      'dist/webhook/main.js',
      '--port=9443',
      '--policy-namespace=metal-maintenance-system',
      '--literal=$(POD_NAMESPACE)',
      '--unknown=$(NOT_SET)',
      '--host=10.244.0.7',
      '--ops-host=10.244.0.7',
    ]);
  });

  it('gives the env of the downward API, earlier variables and the kubernetes Service', () => {
    const pod = fixture();
    const { env } = containerPlan(pod, pod.spec.containers[0]!, host);
    expect(env).toMatchObject({
      POD_NAMESPACE: 'metal-maintenance-system',
      GREETING: 'in metal-maintenance-system',
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: '6443',
      HOSTNAME: 'metal-maintenance-webhook-5cb86dfb6f-xbjr7',
    });
  });

  it('mounts the volumes at their paths and probes readiness on the named port', () => {
    const pod = fixture();
    const plan = containerPlan(pod, pod.spec.containers[0]!, host);
    expect(plan.mounts).toEqual([
      { volume: 'serving-certs', mountPath: '/tmp/k8s-webhook-server/serving-certs', readOnly: true },
      {
        volume: 'kube-api-access-x7k2p',
        mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
        readOnly: true,
      },
    ]);
    expect(plan.readiness).toEqual({ path: '/readyz', port: 8081, periodMs: 2000, failureThreshold: 1 });
  });

  it('binds only --ops-host for a controller, which has no --host flag', () => {
    const pod = fixture();
    const c = { ...pod.spec.containers[0]!, command: ['node', 'dist/controllers/maintenance/main.js'] };
    expect(containerPlan(pod, c, host).argv.slice(-1)).toEqual(['--ops-host=10.244.0.7']);
  });

  it.each([
    ['an image not ours', { image: 'nginx:1.27' }, /image nginx:1.27 is not metal-maintenance/],
    ['a command not node', { command: ['sh', '-c', 'true'] }, /does not start with node/],
    [
      'a fieldRef it does not fill',
      { env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'metadata.labels' } } }] },
      /fieldRef metadata.labels is not one the stand-in fills/,
    ],
    [
      'a mount of no volume',
      { volumeMounts: [{ name: 'nope', mountPath: '/x' }] },
      /volumeMount nope names no volume/,
    ],
    [
      'a probe port no container port names',
      { readinessProbe: { httpGet: { path: '/', port: 'metrics' } } },
      /readiness probe port metrics names no container port/,
    ],
  ])('refuses %s, saying which', (_what, change, message) => {
    const pod = fixture();
    const c = { ...pod.spec.containers[0]!, ...change };
    expect(() => containerPlan(pod, c, host)).toThrow(PodPlanError);
    expect(() => containerPlan(pod, c, host)).toThrow(message);
  });

  it('accepts the image under a registry, a tag or a digest', () => {
    const pod = fixture();
    for (const image of [
      'ghcr.io/acme/metal-maintenance:v1.2.3',
      'metal-maintenance@sha256:' + 'a'.repeat(64),
    ])
      expect(() => containerPlan(pod, { ...pod.spec.containers[0]!, image }, host)).not.toThrow();
  });
});

describe('volumePlans', () => {
  it('plans the mounted volumes only: the whole secret, and the projected token, CA and namespace', () => {
    expect(volumePlans(fixture(), host)).toEqual([
      { name: 'serving-certs', files: [], whole: { from: 'secret', name: 'metal-maintenance-webhook-tls' } },
      {
        name: 'kube-api-access-x7k2p',
        files: [
          { path: 'token', from: 'token', expirationSeconds: 3607 },
          { path: 'ca.crt', from: 'configMap', name: 'kube-root-ca.crt', key: 'ca.crt' },
          { path: 'namespace', from: 'field', value: 'metal-maintenance-system' },
        ],
      },
    ]);
  });

  it('keeps optional on a volume whose source may be missing', () => {
    const pod = fixture();
    pod.spec.volumes![0] = { name: 'serving-certs', configMap: { name: 'bmc-ca', optional: true } };
    expect(volumePlans(pod, host)[0]).toEqual({
      name: 'serving-certs',
      files: [],
      whole: { from: 'configMap', name: 'bmc-ca', optional: true },
    });
  });

  it('refuses a volume kind it does not mount', () => {
    const pod = fixture();
    pod.spec.volumes![0] = { name: 'serving-certs', hostPath: { path: '/' } } as never;
    expect(() => volumePlans(pod, host)).toThrow(
      /volume serving-certs is of a kind the stand-in does not mount/,
    );
  });
});

describe('podStatus', () => {
  const now = '2026-12-04T18:00:10Z';
  it('reports Running with the pod address, Ready only when every container is', () => {
    const pod = fixture();
    const s = podStatus(
      pod,
      host,
      [{ name: 'webhook', running: true, ready: false, restartCount: 0 }],
      now,
      now,
    );
    expect(s).toMatchObject({ phase: 'Running', podIP: '10.244.0.7', hostIP: '10.244.0.1' });
    expect(s.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    const ready = podStatus(
      pod,
      host,
      [{ name: 'webhook', running: true, ready: true, restartCount: 0 }],
      now,
      now,
    );
    expect(ready.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(ready.containerStatuses?.[0]).toMatchObject({
      name: 'webhook',
      image: 'metal-maintenance',
      ready: true,
    });
  });

  it('keeps a condition transition time while its status holds', () => {
    const pod = fixture();
    pod.status = {
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-04T17:00:00Z' }],
    };
    const s = podStatus(
      pod,
      host,
      [{ name: 'webhook', running: true, ready: true, restartCount: 0 }],
      now,
      now,
    );
    expect(s.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-12-04T17:00:00Z');
  });

  it('shows a restarted container waiting in back-off with its last exit', () => {
    const s = podStatus(
      fixture(),
      host,
      [
        {
          name: 'webhook',
          running: false,
          ready: false,
          restartCount: 2,
          waiting: 'CrashLoopBackOff',
          lastExit: { exitCode: 1, signal: null, finishedAt: now },
        },
      ],
      now,
      now,
    );
    expect(s.containerStatuses?.[0]).toMatchObject({
      restartCount: 2,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 1, reason: 'Error' } },
    });
  });
});

describe('expand and restartDelayMs', () => {
  it('expands known variables, unescapes $$ and leaves unknown ones', () => {
    expect(expand('$(A)-$$(A)-$(B)', { A: 'x' })).toBe('x-$(A)-$(B)');
  });
  it('backs off as the kubelet: 10 s doubling, capped at five minutes', () => {
    expect([0, 1, 2, 5, 10].map(restartDelayMs)).toEqual([10_000, 20_000, 40_000, 300_000, 300_000]);
  });
});

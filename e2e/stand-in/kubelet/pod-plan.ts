// The stand-in kubelet's decisions, as pure functions: what process a pod's container becomes (argv,
// env, mounts), which volumes it needs written, and the pod status to report. The I/O (volume files,
// processes, the API) is in volumes.ts, runtime.ts and kubelet.ts.
//
// What it does as the kubelet does: env from `value` and the downward API, $(VAR) expansion in command
// and args, the `kubernetes` Service's env (what in-cluster config reads), secret, configMap and
// projected volumes (a bound ServiceAccount token, the cluster CA from kube-root-ca.crt, the
// namespace) mounted at the container's mount paths, readiness from the HTTP readiness probe,
// restart on exit with the kubelet's back-off. What it does not: images (every container of ours is
// the image's files, dist/, mounted at the image's WORKDIR /app), resource limits, securityContext,
// liveness and startup probes, and a network namespace per pod: the pods share the stand-in cluster's
// network namespace (../network.ts), each with an address of its own, which the binary is told to bind
// (podBindArgs), because in one network every pod's `0.0.0.0:8081` would collide.
import type { KubeObject } from '../../../api/schema/meta.js';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

export interface Probe {
  httpGet?: { path?: string; port: number | string };
  periodSeconds?: number;
  failureThreshold?: number;
}

export interface ContainerSpec {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

export interface KeyToPath {
  key: string;
  path: string;
}

export interface ProjectedSource {
  serviceAccountToken?: { path: string; expirationSeconds?: number; audience?: string };
  configMap?: { name: string; items?: KeyToPath[] };
  secret?: { name: string; items?: KeyToPath[] };
  downwardAPI?: { items: { path: string; fieldRef?: { fieldPath: string } }[] };
}

export interface VolumeSpec {
  name: string;
  secret?: { secretName: string; items?: KeyToPath[]; optional?: boolean };
  configMap?: { name: string; items?: KeyToPath[]; optional?: boolean };
  projected?: { sources: ProjectedSource[] };
  emptyDir?: Record<string, unknown>;
}

export interface PodObject extends KubeObject {
  spec: {
    nodeName?: string;
    serviceAccountName?: string;
    terminationGracePeriodSeconds?: number;
    containers: ContainerSpec[];
    volumes?: VolumeSpec[];
  };
  status?: {
    phase?: string;
    podIP?: string;
    hostIP?: string;
    startTime?: string;
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
    containerStatuses?: ContainerStatus[];
  };
}

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: Record<string, Record<string, unknown>>;
  lastState?: Record<string, Record<string, unknown>>;
}

/** Where the pod runs: its own address, the node's, and the API server in-cluster config must reach. */
export interface PodHost {
  podIP: string;
  hostIP: string;
  apiserverHost: string;
  apiserverPort: number;
}

/** One file of a volume: its path in the volume and where its content comes from. */
export type VolumeFile =
  | { path: string; from: 'secret' | 'configMap'; name: string; key: string; optional?: boolean }
  | { path: string; from: 'token'; audience?: string; expirationSeconds: number }
  | { path: string; from: 'field'; value: string };

export interface VolumePlan {
  name: string;
  /** Empty for an emptyDir. */
  files: VolumeFile[];
  /** Secret and configMap volumes list every key when no items are given: resolved at write time. */
  whole?: { from: 'secret' | 'configMap'; name: string; optional?: boolean };
}

export interface ContainerPlan {
  name: string;
  /** The arguments after `node`. */
  argv: string[];
  env: Record<string, string>;
  mounts: { volume: string; mountPath: string; readOnly: boolean }[];
  readiness?: { path: string; port: number; periodMs: number; failureThreshold: number };
}

export class PodPlanError extends Error {
  readonly code = 'METAL_STAND_IN_POD';
}

/** The image every container of ours runs; the stand-in runs it from dist/ (docs/operations.md). */
export const OUR_IMAGE = /^(?:.*\/)?metal-maintenance(?::[\w.-]+)?(?:@sha256:[a-f0-9]{64})?$/;
/** The image's WORKDIR, where its files are mounted. */
export const IMAGE_WORKDIR = '/app';

/** Listener flags each binary takes (their defaults bind 0.0.0.0; here the pod's own address). */
export function podBindArgs(argv: readonly string[], podIP: string): string[] {
  const entry = argv[0] ?? '';
  const flags = entry.endsWith('webhook/main.js') ? ['--host', '--ops-host'] : ['--ops-host'];
  return flags.map((f) => `${f}=${podIP}`);
}

function fieldValue(pod: PodObject, host: PodHost, path: string): string {
  const fields: Record<string, string | undefined> = {
    'metadata.name': pod.metadata.name,
    'metadata.namespace': pod.metadata.namespace,
    'metadata.uid': pod.metadata.uid,
    'spec.nodeName': pod.spec.nodeName,
    'spec.serviceAccountName': pod.spec.serviceAccountName,
    'status.podIP': host.podIP,
    'status.hostIP': host.hostIP,
  };
  const v = fields[path];
  if (v === undefined)
    throw new PodPlanError(
      `pod ${pod.metadata.namespace}/${pod.metadata.name}: fieldRef ${path} is not one the stand-in fills ` +
        `(${Object.keys(fields).join(', ')})`,
    );
  return v;
}

/** The process of one container: its argv after `node`, env and mounts. */
export function containerPlan(pod: PodObject, container: ContainerSpec, host: PodHost): ContainerPlan {
  const where = `pod ${pod.metadata.namespace}/${pod.metadata.name} container ${container.name}`;
  if (!OUR_IMAGE.test(container.image ?? ''))
    throw new PodPlanError(
      `${where}: image ${container.image} is not metal-maintenance, the one image the stand-in runs`,
    );
  // The `kubernetes` Service's variables, as the kubelet sets them in every pod; its address is the API
  // server's own, since no kube-proxy routes the ClusterIP here.
  const env: Record<string, string> = {
    KUBERNETES_SERVICE_HOST: host.apiserverHost,
    KUBERNETES_SERVICE_PORT: String(host.apiserverPort),
    KUBERNETES_SERVICE_PORT_HTTPS: String(host.apiserverPort),
    HOSTNAME: pod.metadata.name ?? '',
  };
  for (const v of container.env ?? []) {
    const path = v.valueFrom?.fieldRef?.fieldPath;
    env[v.name] = path !== undefined ? fieldValue(pod, host, path) : expand(v.value ?? '', env);
  }
  const command = (container.command ?? []).map((s) => expand(s, env));
  if (command[0] !== 'node')
    throw new PodPlanError(`${where}: command ${JSON.stringify(command)} does not start with node`);
  const argv = [...command.slice(1), ...(container.args ?? []).map((s) => expand(s, env))];
  const volumes = new Set((pod.spec.volumes ?? []).map((v) => v.name));
  const mounts = (container.volumeMounts ?? []).map((m) => {
    if (!volumes.has(m.name))
      throw new PodPlanError(`${where}: volumeMount ${m.name} names no volume of the pod`);
    return { volume: m.name, mountPath: m.mountPath, readOnly: m.readOnly ?? false };
  });
  return {
    name: container.name,
    argv: [...argv, ...podBindArgs(argv, host.podIP)],
    env,
    mounts,
    ...readinessOf(container, where),
  };
}

/** $(VAR) from the variables defined so far; $$ escapes; an unknown $(VAR) stays as written. */
export function expand(s: string, env: Record<string, string>): string {
  return s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (all, name?: string) =>
    name === undefined ? '$' : (env[name] ?? all),
  );
}

function readinessOf(container: ContainerSpec, where: string): Pick<ContainerPlan, 'readiness'> {
  const probe = container.readinessProbe;
  if (!probe) return {};
  if (!probe.httpGet) throw new PodPlanError(`${where}: only httpGet readiness probes are run`);
  const p = probe.httpGet.port;
  const port = typeof p === 'number' ? p : container.ports?.find((x) => x.name === p)?.containerPort;
  if (port === undefined)
    throw new PodPlanError(`${where}: readiness probe port ${p} names no container port`);
  return {
    readiness: {
      path: probe.httpGet.path ?? '/',
      port,
      periodMs: (probe.periodSeconds ?? 10) * 1000,
      failureThreshold: probe.failureThreshold ?? 3,
    },
  };
}

/** The files of each volume of the pod that a container mounts. */
export function volumePlans(pod: PodObject, host: PodHost): VolumePlan[] {
  const mounted = new Set(pod.spec.containers.flatMap((c) => (c.volumeMounts ?? []).map((m) => m.name)));
  const where = `pod ${pod.metadata.namespace}/${pod.metadata.name}`;
  return (pod.spec.volumes ?? [])
    .filter((v) => mounted.has(v.name))
    .map((v): VolumePlan => {
      if (v.emptyDir) return { name: v.name, files: [] };
      if (v.secret) return keyed(v.name, 'secret', v.secret.secretName, v.secret.items, v.secret.optional);
      if (v.configMap)
        return keyed(v.name, 'configMap', v.configMap.name, v.configMap.items, v.configMap.optional);
      if (v.projected)
        return {
          name: v.name,
          files: v.projected.sources.flatMap((s) => projectedFiles(pod, host, s, where)),
        };
      throw new PodPlanError(`${where}: volume ${v.name} is of a kind the stand-in does not mount`);
    });
}

/** A secret or configMap volume; `optional`: a missing source (or key) leaves the volume empty. */
function keyed(
  name: string,
  from: 'secret' | 'configMap',
  source: string,
  items?: KeyToPath[],
  optional?: boolean,
): VolumePlan {
  const opt = optional ? { optional } : {};
  if (!items) return { name, files: [], whole: { from, name: source, ...opt } };
  return { name, files: items.map((i) => ({ path: i.path, from, name: source, key: i.key, ...opt })) };
}

function projectedFiles(pod: PodObject, host: PodHost, s: ProjectedSource, where: string): VolumeFile[] {
  if (s.serviceAccountToken)
    return [
      {
        path: s.serviceAccountToken.path,
        from: 'token',
        expirationSeconds: s.serviceAccountToken.expirationSeconds ?? 3607,
        ...(s.serviceAccountToken.audience ? { audience: s.serviceAccountToken.audience } : {}),
      },
    ];
  const items = (from: 'secret' | 'configMap', name: string, list?: KeyToPath[]): VolumeFile[] => {
    if (!list)
      throw new PodPlanError(`${where}: a projected ${from} ${name} without items is not mounted here`);
    return list.map((i) => ({ path: i.path, from, name, key: i.key }));
  };
  if (s.configMap) return items('configMap', s.configMap.name, s.configMap.items);
  if (s.secret) return items('secret', s.secret.name, s.secret.items);
  if (s.downwardAPI)
    return s.downwardAPI.items.map((i) => {
      if (!i.fieldRef) throw new PodPlanError(`${where}: downwardAPI ${i.path} without fieldRef`);
      return { path: i.path, from: 'field', value: fieldValue(pod, host, i.fieldRef.fieldPath) };
    });
  throw new PodPlanError(`${where}: a projected source of a kind the stand-in does not mount`);
}

/** What the runtime knows of one container now. */
export interface ContainerRuntimeState {
  name: string;
  running: boolean;
  ready: boolean;
  restartCount: number;
  startedAt?: string;
  lastExit?: { exitCode: number | null; signal: string | null; finishedAt: string };
  /** Waiting to start: why (ContainerCreating while volumes are written, CrashLoopBackOff). */
  waiting?: string;
}

/** The pod status the kubelet reports for containers in `states`. */
export function podStatus(
  pod: PodObject,
  host: PodHost,
  states: readonly ContainerRuntimeState[],
  startTime: string,
  now: string,
): NonNullable<PodObject['status']> {
  const previous = new Map((pod.status?.conditions ?? []).map((c) => [c.type, c]));
  const condition = (type: string, ok: boolean) => {
    const status = ok ? 'True' : 'False';
    const before = previous.get(type);
    return { type, status, lastTransitionTime: before?.status === status ? before.lastTransitionTime : now };
  };
  const allReady = states.length > 0 && states.every((s) => s.ready);
  const image = (name: string) => pod.spec.containers.find((c) => c.name === name)?.image ?? '';
  return {
    phase: 'Running',
    podIP: host.podIP,
    hostIP: host.hostIP,
    startTime,
    conditions: [
      condition('PodScheduled', true),
      condition('Initialized', true),
      condition('ContainersReady', allReady),
      condition('Ready', allReady),
    ],
    containerStatuses: states.map((s) => ({
      name: s.name,
      image: image(s.name),
      imageID: `stand-in://${image(s.name)}`,
      ready: s.ready,
      started: s.running,
      restartCount: s.restartCount,
      state: containerState(s),
      ...(s.lastExit
        ? {
            lastState: {
              terminated: {
                exitCode: s.lastExit.exitCode ?? 137,
                ...(s.lastExit.signal ? { signal: s.lastExit.signal } : {}),
                finishedAt: s.lastExit.finishedAt,
                reason: s.lastExit.exitCode === 0 ? 'Completed' : 'Error',
              },
            },
          }
        : {}),
    })),
  };
}

function containerState(s: ContainerRuntimeState): ContainerStatus['state'] {
  if (s.running) return { running: { startedAt: s.startedAt } };
  return { waiting: { reason: s.waiting ?? 'ContainerCreating' } };
}

/** The kubelet's crash back-off before restart number `restartCount + 1`: 10 s doubling, at most five minutes. */
export function restartDelayMs(restartCount: number): number {
  return Math.min(10_000 * 2 ** restartCount, 300_000);
}

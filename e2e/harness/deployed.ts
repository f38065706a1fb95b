// A binary started the way its Deployment starts it: the image's files (./dist.ts), the
// container's command, args and env read from the manifest, so a flag that drifts between manifest
// and binary fails the test that starts it. What the kubelet would do is done here, named as such:
// env values from the downward API (metadata.namespace, metadata.name) and $(VAR) expansion in
// command and args. The harness appends only what a pod gets from its surroundings: a kubeconfig
// (in-cluster config there), and free ports and test certificate paths where the pod's are fixed.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './control-plane.js';
import { sharedDist } from './dist.js';
import { k8sToolPath } from './k8s-tools.js';
import { spawnNodeProcess, type RunningBinary } from './processes.js';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

export interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
}

export interface Deployment {
  kind: 'Deployment';
  metadata: { name: string; namespace?: string };
  spec: { template: { spec: { containers: Container[] } } };
}

let shipped: Deployment[] | undefined;

/** Every Deployment of the install as `kubectl kustomize manifests/default` renders it. */
export function shippedDeployments(): Deployment[] {
  shipped ??= parseAllDocuments(
    execFileSync(k8sToolPath('kubectl'), ['kustomize', join(REPO_ROOT, 'manifests', 'default')], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      timeout: 60_000,
    }),
  )
    .map((d) => d.toJS() as { kind?: string } | null)
    .filter((o): o is Deployment => o?.kind === 'Deployment');
  return shipped;
}

/** The shipped Deployment of one binary: `webhook` or `<name>-controller`. */
export function shippedDeployment(binary: string): Deployment {
  const name = `metal-maintenance-${binary}`;
  const d = shippedDeployments().find((x) => x.metadata.name === name);
  if (!d) throw new Error(`manifests/default renders no Deployment ${name}`);
  return d;
}

/**
 * Starts `binary` as its shipped Deployment does, from the image files (prepareDist first), with the
 * harness's `extraArgs` appended: a kubeconfig, loopback ports, test certificates and short Leases.
 * `name` tells replicas apart in logs.
 */
export function spawnShipped(
  binary: string,
  extraArgs: string[],
  options: { name?: string; env?: Record<string, string> } = {},
): RunningBinary {
  return spawnDeployed(shippedDeployment(binary), sharedDist(), extraArgs, options.env, options.name);
}

/** The kubelet's part: downward-API env and $(VAR) expansion (an unknown $(VAR) stays as written). */
export function containerProcess(
  deployment: Deployment,
  podName = `${deployment.metadata.name}-test`,
): { argv: string[]; env: Record<string, string> } {
  const container = deployment.spec.template.spec.containers[0];
  if (!container) throw new Error(`Deployment/${deployment.metadata.name} has no container`);
  const fields: Record<string, string> = {
    'metadata.namespace': deployment.metadata.namespace ?? 'default',
    'metadata.name': podName,
  };
  const env: Record<string, string> = {};
  for (const v of container.env ?? []) {
    const path = v.valueFrom?.fieldRef?.fieldPath;
    if (path !== undefined && !(path in fields))
      throw new Error(
        `Deployment/${deployment.metadata.name}: env ${v.name} from ${path}, which the harness does not fill`,
      );
    env[v.name] = path !== undefined ? fields[path]! : (v.value ?? '');
  }
  const expand = (s: string) =>
    s.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (all, n: string) => env[n] ?? all);
  const command = (container.command ?? []).map(expand);
  if (command[0] !== 'node')
    throw new Error(
      `Deployment/${deployment.metadata.name}: the command does not start with node (${command[0]})`,
    );
  return { argv: [...command.slice(1), ...(container.args ?? []).map(expand)], env };
}

/** Starts the Deployment's container process from `distDir`, with `extraArgs` appended (later flags win). */
export function spawnDeployed(
  deployment: Deployment,
  distDir: string,
  extraArgs: string[],
  env: Record<string, string> = {},
  name = deployment.metadata.name,
): RunningBinary {
  const p = containerProcess(deployment);
  return spawnNodeProcess(name, [...p.argv, ...extraArgs], {
    cwd: distDir,
    env: { ...p.env, ...env, NODE_ENV: 'production' },
  });
}

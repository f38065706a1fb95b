// Runs the e2e suite's cluster mode here, on the stand-in cluster (e2e/stand-in/cluster.ts): brings the
// cluster up with the system installed from manifests/, runs the files of e2e/cluster-mode.files with
// E2E_TARGET=cluster and KUBECONFIG set to it, and tears everything down. On failure it prints the
// pods, the events and the tail of every container log, what `kubectl` would show an operator. All of it
// runs in a network namespace of its own (e2e/stand-in/network.ts): this script prepares the image's
// files, then runs itself again inside one.
//
//   npx tsx scripts/cluster-mode-local.ts [-- <extra jest args>]   the suite (scripts/test.sh runs it)
//   npx tsx scripts/cluster-mode-local.ts -- <file.test.ts>...     only those files (e.g. one to try)
//   npx tsx scripts/cluster-mode-local.ts --up                     only the cluster, until Ctrl-C
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../e2e/harness/control-plane.js';
import { kubectl } from '../e2e/harness/k8s-tools.js';
import { prepareDist } from '../e2e/harness/dist.js';
import { leftBehind } from '../e2e/harness/run-objects.js';
import { KubeClient } from '../lib/kube/client.js';
import { startStandInCluster, type StandInCluster } from '../e2e/stand-in/cluster.js';
import { inPrivateNetwork, rerunInPrivateNetwork } from '../e2e/stand-in/network.js';

const args = process.argv.slice(2);
const upOnly = args[0] === '--up';
const extra = args[0] === '--' ? args.slice(1) : [];
// Test files among the extra args replace the list (Jest would run the union of both).
const isFile = (a: string) => a.endsWith('.test.ts');
const jestArgs = extra.filter((a) => !isFile(a));
const chosen = extra.filter(isFile);
const files = chosen.length
  ? chosen
  : readFileSync(join(REPO_ROOT, 'e2e', 'cluster-mode.files'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));

async function diagnose(cluster: StandInCluster): Promise<void> {
  for (const what of [
    ['get', 'pods', '-A', '-o', 'wide'],
    ['get', 'events', '-A', '--sort-by=.lastTimestamp'],
  ]) {
    const r = await kubectl(cluster.kubeconfig, what);
    console.error(`\n$ kubectl ${what.join(' ')}\n${r.stdout}${r.stderr}`);
  }
  const pods = join(cluster.dir, 'pods');
  for (const pod of readdirSync(pods, { withFileTypes: true }).filter((d) => d.isDirectory()))
    for (const f of readdirSync(join(pods, pod.name)).filter((n) => n.endsWith('.log')))
      console.error(
        `\n--- ${pod.name}/${f} (tail)\n${readFileSync(join(pods, pod.name, f), 'utf8').slice(-3000)}`,
      );
}

/** Cluster mode deletes what it created: a namespace or cluster-scoped object left fails the run. */
async function noneLeft(kubeconfig: string): Promise<number> {
  const admin = await KubeClient.fromFile(kubeconfig);
  try {
    const left = await leftBehind(admin);
    if (!left.length) return 0;
    console.error(`cluster mode left ${left.length} objects behind: ${left.join(', ')}`);
    return 1;
  } finally {
    await admin.close();
  }
}

async function main(): Promise<number> {
  const t0 = Date.now();
  const cluster = await startStandInCluster();
  // Persistent handlers: npx forwards the signal a terminal also sends, and a second one must not kill
  // this process before the teardown has run.
  const interrupted = new Promise<number>((resolve) => {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => resolve(130));
  });
  try {
    console.error(`stand-in cluster up in ${Date.now() - t0} ms: KUBECONFIG=${cluster.kubeconfig}`);
    if (upOnly) return await interrupted;
    const jest = spawn(
      join(REPO_ROOT, 'node_modules', '.bin', 'jest'),
      [...files, '--selectProjects', 'integration', '--runInBand', ...jestArgs],
      {
        cwd: REPO_ROOT,
        stdio: 'inherit',
        env: {
          ...process.env,
          // Jest runs the suites as ES modules (as the README's test command does).
          NODE_OPTIONS: `--experimental-vm-modules ${process.env.NODE_OPTIONS ?? ''}`.trim(),
          E2E_TARGET: 'cluster',
          KUBECONFIG: cluster.kubeconfig,
        },
      },
    );
    const code = await Promise.race([
      new Promise<number>((resolve) => jest.once('exit', (c) => resolve(c ?? 1))),
      interrupted.then((c) => (jest.kill('SIGTERM'), c)),
    ]);
    if (code !== 0) await diagnose(cluster).catch((e: Error) => console.error(`diagnostics: ${e.message}`));
    if (code === 0) return await noneLeft(cluster.kubeconfig);
    return code;
  } finally {
    await cluster.stop();
    console.error(`stand-in cluster down (${Date.now() - t0} ms in all)`);
  }
}

async function entry(): Promise<number> {
  if (inPrivateNetwork()) return main();
  // Built here, outside the namespace, where a build could reach the package registry.
  await prepareDist();
  return rerunInPrivateNetwork(import.meta.filename, args);
}

entry().then(
  (code) => process.exit(code),
  (e: Error) => {
    console.error(`cluster mode on the stand-in cluster failed: ${e.stack ?? e.message}`);
    process.exit(1);
  },
);

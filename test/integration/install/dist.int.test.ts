// The image's files as scripts/build-dist.sh builds them from the Dockerfile (npm ci, tsc, npm prune
// --omit=dev): every binary starts from them with its Deployment's command, args and env, and
// `kubectl metal` installs from `npm pack` of them into a clean prefix and runs with production
// dependencies only.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { adminClient, freshNamespace } from '../../../e2e/harness/env.js';
import {
  containerProcess,
  shippedDeployment,
  shippedDeployments,
  spawnDeployed,
} from '../../../e2e/harness/deployed.js';
import {
  SETUP_TIMEOUT_MS,
  builtDigest,
  enclosingNodeModules,
  inputsDigest,
  prepareDist,
} from '../../../e2e/harness/dist.js';
import { adminKubeconfig } from '../../../e2e/harness/processes.js';
import { makeServingCertificate } from '../../../e2e/harness/webhook.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { tool } from './tools.js';

const run = promisify(execFile);
/** npm with the test's environment (its registry settings), allowed minutes on a cold cache. */
const npm = (args: string[], cwd?: string) =>
  run('npm', args, { cwd, timeout: 10 * 60_000, maxBuffer: 64 * 1024 * 1024 });

let work: string;
let app: string;
let admin: KubeClient;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'metal-dist-test-'));
  // The checkout's one build, shared with the lifecycle suites (e2e/harness/dist.ts).
  app = await prepareDist();
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  await admin?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

it('is built from the checkout as it is now, outside any Node project', () => {
  expect(builtDigest(app)).toBe(inputsDigest());
  expect(enclosingNodeModules(app)).toBeUndefined();
});

it('holds the compiled binaries and production dependencies only', () => {
  expect(existsSync(join(app, 'dist', 'webhook', 'main.js'))).toBe(true);
  expect(existsSync(join(app, 'dist', 'cli', 'kubectl-metal.js'))).toBe(true);
  const modules = readdirSync(join(app, 'node_modules'));
  expect(modules).toContain('fastify');
  for (const dev of ['tsx', 'typescript', 'jest', 'eslint']) expect(modules).not.toContain(dev);
});

describe('every Deployment', () => {
  it('starts its binary from the image files with the manifest’s command, args and env', async () => {
    admin = await adminClient();
    const deployments = shippedDeployments();
    expect(deployments.length).toBeGreaterThanOrEqual(6);
    const { certDir } = makeServingCertificate(mkdtempSync(join(work, 'certs-')));
    for (const d of deployments) {
      // Only what a pod gets from its surroundings: API access, free loopback ports, the test's
      // serving certificate, and a namespace of its own (so its Lease meets no other test's).
      const ns = await freshNamespace(admin, 'dist');
      const extra =
        d.metadata.name === 'metal-maintenance-webhook'
          ? ['--host=127.0.0.1', '--port=0', `--cert-dir=${certDir}`, `--policy-namespace=${ns}`]
          : [`--namespace=${ns}`];
      const binary = spawnDeployed(d, app, [
        `--kubeconfig=${adminKubeconfig()}`,
        '--ops-host=127.0.0.1',
        '--ops-port=0',
        ...extra,
      ]);
      try {
        const line = await binary.waitForLog(
          (l) => typeof l.msg === 'string' && (l.msg === 'webhook serving' || / started$/.test(l.msg)),
          60_000,
        );
        expect({ deployment: d.metadata.name, msg: line.msg }).toEqual({
          deployment: d.metadata.name,
          msg: expect.stringMatching(/serving|started/),
        });
      } finally {
        expect({ deployment: d.metadata.name, exit: await binary.stop('SIGTERM', 20_000) }).toEqual({
          deployment: d.metadata.name,
          exit: 0,
        });
      }
    }
  }, 600_000);
});

describe('a flag that drifts between manifest and binary', () => {
  /** The Deployment with one arg rewritten, started as the harness starts it; its exit and output. */
  async function startDrifted(binary: string, from: string, to: string) {
    const d = structuredClone(shippedDeployment(binary));
    const container = d.spec.template.spec.containers[0]!;
    expect(container.args).toContain(from);
    container.args = container.args!.map((a) => (a === from ? to : a));
    const p = containerProcess(d);
    try {
      await run(process.execPath, [...p.argv, `--kubeconfig=${adminKubeconfig()}`, '--ops-port=0'], {
        cwd: app,
        env: { ...process.env, ...p.env, NODE_ENV: 'production' },
        timeout: 30_000,
      });
      return { code: 0, output: '' };
    } catch (e) {
      const err = e as { code?: number; killed?: boolean; stdout?: string; stderr?: string };
      return { code: err.killed ? 'timeout' : err.code, output: `${err.stderr ?? ''}${err.stdout ?? ''}` };
    }
  }

  // The lifecycle suites start every binary this way (their crash suite checks the argv), so either
  // drift below would stop the suite's setup rather than pass unseen.
  it('stops the binary at start, naming the flag, when the binary no longer knows it', async () => {
    const r = await startDrifted(
      'maintenance-controller',
      '--park-mode=annotation',
      '--parking-mode=annotation',
    );
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBe('timeout');
    expect(r.output).toContain('--parking-mode');
  });

  it('stops the binary at start, naming the value, when the manifest passes a value it refuses', async () => {
    const r = await startDrifted(
      'maintenance-controller',
      '--park-mode=annotation',
      '--park-mode=annotations',
    );
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBe('timeout');
    expect(r.output).toContain('annotations');
  });
});

describe('kubectl metal', () => {
  it('installs from npm pack into a clean prefix and runs without dev dependencies', async () => {
    const pack = JSON.parse(
      (await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], app)).stdout,
    ) as { filename: string }[];
    const tarball = join(work, pack[0]!.filename);
    const prefix = join(work, 'prefix');
    // From the registry (or npm's cache): the package's production dependencies, nothing else.
    await npm([
      'install',
      '--global',
      '--prefix',
      prefix,
      '--omit=dev',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      tarball,
    ]);
    const installed = join(prefix, 'lib', 'node_modules', 'metal-maintenance');
    expect(existsSync(join(installed, 'node_modules', 'tsx'))).toBe(false);
    expect(existsSync(join(installed, 'cli'))).toBe(false);
    const bin = join(prefix, 'bin', 'kubectl-metal');
    const status = await tool(bin, ['--kubeconfig', adminKubeconfig(), 'status']);
    expect({ code: status.code, err: status.stderr }).toEqual({ code: 0, err: '' });
    expect(status.stdout).toMatch(/^MAINTENANCES$/m);
    expect((await tool(bin, ['defer', 'c1'])).code).toBe(2);
  }, 900_000);
});

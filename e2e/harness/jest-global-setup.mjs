// Jest global setup of the integration project: one real control plane for the whole run.
// Plain JavaScript because Jest loads this hook outside its ESM transform; the work happens in
// up.ts, run with tsx. With E2E_TARGET=cluster (e2e/harness/target.ts) it starts nothing: the suites
// use the cluster KUBECONFIG names, where the system is installed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');

function down(dir) {
  try {
    execFileSync('bash', [join(root, 'scripts', 'control-plane.sh'), 'down', dir], { stdio: 'ignore' });
  } catch {
    // already stopped
  }
}

export default function globalSetup() {
  if (process.env.E2E_TARGET === 'cluster') {
    const kc = process.env.KUBECONFIG;
    if (!kc || !existsSync(kc))
      throw new Error(`E2E_TARGET=cluster needs KUBECONFIG naming an existing file (got ${kc ?? 'nothing'})`);
    console.error(`[harness] cluster mode: the installed system in the cluster of ${kc}`);
    return;
  }
  const dir = process.env.METAL_TEST_CP_DIR ?? mkdtempSync(join(tmpdir(), 'metal-cp-'));
  // However Jest ends (teardown, crash, Ctrl-C), stop what we started.
  process.once('exit', () => down(dir));
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      down(dir);
      process.exit(130);
    });
  }
  execFileSync(process.execPath, ['--import', 'tsx', join(root, 'e2e', 'harness', 'up.ts'), dir], {
    stdio: ['ignore', 'inherit', 'inherit'],
    cwd: root,
  });
  process.env.METAL_TEST_CP_DIR = dir;
}

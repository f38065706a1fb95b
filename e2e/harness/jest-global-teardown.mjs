import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');

export default function globalTeardown() {
  const dir = process.env.METAL_TEST_CP_DIR;
  if (!dir) return;
  execFileSync('bash', [join(root, 'scripts', 'control-plane.sh'), 'down', dir], { stdio: 'inherit' });
  if (!process.env.METAL_TEST_KEEP) rmSync(dir, { recursive: true, force: true });
}

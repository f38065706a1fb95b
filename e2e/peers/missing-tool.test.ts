// The peer preparation scripts fail loudly, saying what to install, and reuse a warm cache.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { preparePeer } from './process.js';

const cacheDirs: string[] = [];
function emptyCache(): string {
  const dir = mkdtempSync(join(tmpdir(), 'metal-cache-'));
  cacheDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of cacheDirs) rmSync(d, { recursive: true, force: true });
});

describe('peer preparation', () => {
  it('sushy-tools: a missing Python says what to install', async () => {
    const env = { ...process.env, METAL_CACHE_DIR: emptyCache(), SUSHY_PYTHON: '/nonexistent/python3' };
    await expect(preparePeer('sushy-tools.sh', env)).rejects.toThrow(
      /MISSING TOOL: '\/nonexistent\/python3' not found[\s\S]*apt-get install python3 python3-venv/,
    );
  });

  it('metal-operator mock: a missing Go toolchain says what to install', async () => {
    const env = { ...process.env, METAL_CACHE_DIR: emptyCache(), PATH: '/usr/bin:/bin' };
    await expect(preparePeer('metal-mock.sh', env)).rejects.toThrow(
      /MISSING TOOL: no Go toolchain[\s\S]*Install Go >= 1\.26/,
    );
  });

  it("metal-operator's manager: a missing Go toolchain says what to install", async () => {
    const env = { ...process.env, METAL_CACHE_DIR: emptyCache(), PATH: '/usr/bin:/bin' };
    await expect(preparePeer('metal-operator.sh', env)).rejects.toThrow(
      /MISSING TOOL: no Go toolchain[\s\S]*Install Go >= 1\.26/,
    );
  });

  it('reuses a warm cache without rebuilding', async () => {
    const first = await preparePeer('sushy-tools.sh');
    const started = Date.now();
    expect(await preparePeer('sushy-tools.sh')).toBe(first);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(first).toMatch(/sushy-tools-2\.2\.0-r\d+$/);
  }, 120_000);
});

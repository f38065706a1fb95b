// The demo's options are checked before anything starts: --help, a count that is no number, and zero
// racks answer at once, with no control plane started (each run takes seconds, not the 37 s a control
// plane took before --servers abc crashed).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MAIN = join(import.meta.dirname, 'main.ts');
const TSX = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'tsx');

async function demo(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(TSX, [MAIN, ...args], { timeout: 50_000 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout + x.stderr };
  }
}

describe('demo usage', () => {
  it('answers --help, --servers abc, --racks 0 and --acts 1,8 without starting anything', async () => {
    const [help, servers, racks, acts] = await Promise.all([
      demo('--help'),
      demo('--dir', '/nonexistent', '--servers', 'abc'),
      demo('--dir', '/nonexistent', '--racks', '0'),
      demo('--dir', '/nonexistent', '--acts', '1,8'),
    ]);
    expect(help).toMatchObject({ code: 0, out: expect.stringContaining('--servers <n>') });
    expect(servers).toMatchObject({ code: 2, out: expect.stringContaining('"abc" is not a whole number') });
    expect(racks).toMatchObject({ code: 2, out: expect.stringContaining('must be at least 1, got 0') });
    expect(acts).toMatchObject({ code: 2, out: expect.stringContaining('acts are 1 to 7') });
    for (const r of [help, servers, racks, acts]) expect(r.out).not.toContain('starting a control plane');
  }, 55_000);

  it('refuses act 3 with one tenant, which has no standing approver, and plays acts 1 and 2 without it', async () => {
    const one = await demo('--dir', '/nonexistent', '--tenants', '1');
    expect(one).toMatchObject({
      code: 2,
      out: expect.stringContaining('--acts 3 needs --tenants 2 or more'),
    });
    expect(one.out).not.toContain('starting a control plane');
  }, 55_000);
});

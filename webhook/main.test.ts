// The binary's flags: a value that does not parse is a usage error naming the flag and what would be
// valid, before the binary reads a kubeconfig or opens a port.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const MAIN = join(import.meta.dirname, 'main.ts');

function run(...args: string[]) {
  // No kubeconfig anywhere: a binary that got past its flags would fail on that instead.
  const env = { ...process.env, KUBECONFIG: '/nonexistent/kubeconfig', HOME: '/nonexistent' };
  return spawnSync(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('webhook binary flags', () => {
  it.each([
    ['--log-sampling', '0:100', 'expected INITIAL:THEREAFTER with integers >= 1'],
    ['--log-sampling', 'sometimes', 'or "off", got "sometimes"'],
    ['--port', 'x', 'expected an integer >= 0'],
    ['--sync-timeout', '-5', 'expected seconds >= 0'],
  ])('refuses %s %s with a usage error', (flag, value, why) => {
    const { status, stderr } = run(flag, value);
    expect(status).toBe(1);
    expect(stderr).toContain(`error: option '${flag} `);
    expect(stderr).toContain(`argument '${value}' is invalid.`);
    expect(stderr).toContain(why);
    expect(stderr).not.toContain('    at ');
  });
});

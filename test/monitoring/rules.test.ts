// The shipped alert rules (manifests/monitoring/prometheusrule.yaml) pass `promtool check rules`
// and the unit tests in rules.promtool.yaml, and every alert names a runbook that docs/operations.md
// has. Needs promtool: scripts/lib/prometheus.sh puts Debian's into the cache (scripts/test.sh runs it).
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../e2e/harness/control-plane.js';
import {
  prometheusTools,
  promqlNames,
  shippedRuleGroups,
  writeRuleFile,
} from '../../e2e/harness/prometheus.js';

function promtool(cwd: string, ...args: string[]): string {
  try {
    return execFileSync(prometheusTools().promtool, args, { cwd, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')} failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`, {
      cause: e,
    });
  }
}

describe('the shipped PrometheusRule', () => {
  const groups = shippedRuleGroups();
  const alerts = groups.flatMap((g) => g.rules).filter((r) => r.alert);

  it('passes promtool check rules and its promtool unit tests', () => {
    const dir = mkdtempSync(join(tmpdir(), 'metal-rules-'));
    try {
      writeRuleFile(dir, groups);
      copyFileSync(join(REPO_ROOT, 'test', 'monitoring', 'rules.promtool.yaml'), join(dir, 'tests.yaml'));
      expect(promtool(dir, 'check', 'rules', 'rules.yaml')).toMatch(`SUCCESS: ${alerts.length} rules found`);
      expect(promtool(dir, 'test', 'rules', 'tests.yaml')).toMatch('SUCCESS');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has a unit test for every alert', () => {
    const tests = readFileSync(join(REPO_ROOT, 'test', 'monitoring', 'rules.promtool.yaml'), 'utf8');
    const untested = alerts.map((a) => a.alert!).filter((a) => !tests.includes(`alertname: ${a}\n`));
    expect(untested).toEqual([]);
  });

  it('names, for every alert, a runbook section that docs/operations.md has', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');
    const headings = new Set(
      [...doc.matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, ''),
      ),
    );
    const missing = alerts.filter((a) => {
      const runbook = String((a.annotations as Record<string, string> | undefined)?.runbook ?? '');
      const [file, anchor] = runbook.split('#');
      return (
        file !== 'docs/operations.md' || !anchor || !headings.has(anchor) || anchor !== a.alert!.toLowerCase()
      );
    });
    expect(missing.map((a) => a.alert)).toEqual([]);
  });
});

describe('promqlNames (what the monitoring e2e suite checks against the real Prometheus)', () => {
  it('finds selectors, matchers and grouping labels, and skips functions, strings and ranges', () => {
    const { metrics, labels } = promqlNames(
      'histogram_quantile(0.99, sum by (le, rule) (rate(metal_x_bucket{job="a",code!~"2.."}[5m]))) > 0.5 ' +
        'and on () sum(metal_waiters) > 0 or absent(up{job="w"}) # a comment naming not_a_metric',
    );
    expect([...metrics].sort()).toEqual(['metal_waiters', 'metal_x_bucket', 'up']);
    expect([...labels].sort()).toEqual(['code', 'job', 'le', 'rule']);
  });
});

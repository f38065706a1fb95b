import { DEFAULT_POLICY } from '../../policies/schema.js';
import { Codes } from '../../contract/codes.js';
import { clone, ruleInput } from '../testdata/helpers.js';
import { find, loadReview, loadWorld, request } from '../testdata/load.js';
import { legacyLabels } from './legacy-labels.js';
import { policyConfigMap } from './policy-configmap.js';
import { LEGACY_APPROVED_LABEL } from '../../contract/legacy-labels.js';

describe('legacy approval label', () => {
  const setLabel = (mode: 'translate' | 'warn' | 'deny', before?: string) => {
    const old = clone(find(loadWorld().claims, 'claim-a'));
    if (before) old.metadata.labels = { ...old.metadata.labels, [LEGACY_APPROVED_LABEL]: before };
    const next = clone(old);
    next.metadata.labels = { ...next.metadata.labels, [LEGACY_APPROVED_LABEL]: 'true' };
    return legacyLabels(
      ruleInput(request({ kind: 'ServerClaim', operation: 'UPDATE', object: next, oldObject: old }), {
        policy: { ...DEFAULT_POLICY, legacyLabels: { mode } },
      }),
    );
  };

  it('denies setting the label in deny mode', () => {
    expect(setLabel('deny')).toMatchObject({ allowed: false, code: Codes.LEGACY_LABEL_DENIED, status: 403 });
  });

  it('warns that it has no effect in warn mode, and that it was translated in translate mode', () => {
    expect(setLabel('warn')).toMatchObject({
      allowed: true,
      warnings: [expect.stringContaining('no effect')],
    });
    expect(setLabel('translate')).toMatchObject({
      allowed: true,
      warnings: [expect.stringContaining('translated')],
    });
  });

  it('leaves a label that was already there alone', () => {
    expect(setLabel('deny', 'true')).toMatchObject({ allowed: true, warnings: [] });
  });
});

describe('policy ConfigMap admission', () => {
  it('refuses an invalid policy, naming each field under the data key (fixture)', () => {
    const d = policyConfigMap(ruleInput(loadReview('policy-configmap-invalid').request));
    expect(d).toMatchObject({ allowed: false, code: Codes.POLICY_INVALID, status: 422 });
    expect(d.causes?.map((c) => c.field).sort()).toEqual([
      'data["policy.yaml"].grants.ttl',
      'data["policy.yaml"].legacyLabels.mode',
    ]);
    expect(d.message).toContain('"two minutes"');
    expect(d.message).toContain('"translate", "warn", "deny"');
  });

  const cm = (
    name: string,
    data: Record<string, string> | undefined,
    namespace = 'metal-maintenance-system',
  ) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
    ...(data ? { data } : {}),
  });
  const write = (object: unknown, operation: 'CREATE' | 'UPDATE' | 'DELETE' = 'CREATE') =>
    policyConfigMap(
      ruleInput(
        request({
          kind: 'ConfigMap',
          operation,
          ...(operation === 'DELETE' ? { oldObject: object } : { object }),
        }),
      ),
    );

  it('admits a valid policy and ignores other ConfigMaps', () => {
    expect(write(cm('metal-maintenance-policy', { 'policy.yaml': 'grants: {ttl: 5m}' })).allowed).toBe(true);
    expect(write(cm('something-else', { 'policy.yaml': 'nonsense: [' })).allowed).toBe(true);
    expect(write(cm('metal-maintenance-policy', { 'policy.yaml': 'x' }, 'other-ns')).allowed).toBe(true);
  });

  it('refuses a policy ConfigMap without the data key', () => {
    const d = write(cm('metal-maintenance-policy', undefined));
    expect(d.causes?.[0]?.field).toBe('data["policy.yaml"]');
  });

  it('warns on delete that the last good policy stays in force', () => {
    expect(write(cm('metal-maintenance-policy', {}), 'DELETE')).toMatchObject({
      allowed: true,
      warnings: [expect.stringContaining('last good policy')],
    });
  });
});

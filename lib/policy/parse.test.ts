import { DEFAULT_POLICY } from '../../policies/schema.js';
import { EMPTY_POLICY, parsePolicyConfigMap } from './parse.js';

const cm = (text: unknown, key = 'policy.yaml') => ({
  metadata: { namespace: 'metal-maintenance-system', name: 'metal-maintenance-policy' },
  data: { [key]: text },
});

describe('parsePolicyConfigMap', () => {
  it('fills every field from the defaults for an empty mapping', () => {
    const result = parsePolicyConfigMap(cm('{}\n'));
    expect(result).toMatchObject({ ok: true, policy: DEFAULT_POLICY });
  });

  it.each([
    ['an empty string', ''],
    ['blank lines', '\n  \n'],
    ['only comments', '# grants:\n#   ttl: 5m\n'],
    ['an empty document marker', '---\n'],
    ['null', 'null\n'],
  ])('refuses %s instead of silently resetting every binary to the defaults', (_what, text) => {
    expect(parsePolicyConfigMap(cm(text))).toEqual({
      ok: false,
      errors: [{ field: 'data["policy.yaml"]', message: EMPTY_POLICY }],
    });
  });

  it('overrides only what the document sets', () => {
    const result = parsePolicyConfigMap(cm('grants:\n  ttl: 5m\nlegacyLabels:\n  mode: deny\n'));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.policy.grants).toEqual({ ttl: '5m', ledgerCap: 2000 });
    expect(result.policy.legacyLabels.mode).toBe('deny');
    expect(result.policy.classes).toEqual(DEFAULT_POLICY.classes);
  });

  it('gives the same hash for the same text and a different one for other text', () => {
    const a = parsePolicyConfigMap(cm('grants: {ttl: 5m}'));
    const b = parsePolicyConfigMap(cm('grants: {ttl: 5m}'));
    const c = parsePolicyConfigMap(cm('grants: {ttl: 6m}'));
    expect(a.ok && b.ok && c.ok).toBe(true);
    if (!a.ok || !b.ok || !c.ok) return;
    expect(a.hash).toBe(b.hash);
    expect(a.hash).not.toBe(c.hash);
  });

  it('says which data key is missing', () => {
    expect(parsePolicyConfigMap(cm('x: 1', 'other.yaml'))).toEqual({
      ok: false,
      errors: [{ field: 'data["policy.yaml"]', message: expect.stringContaining('is missing') }],
    });
    expect(parsePolicyConfigMap({ metadata: {} }).ok).toBe(false);
    expect(parsePolicyConfigMap(null).ok).toBe(false);
    expect(parsePolicyConfigMap(cm(42)).ok).toBe(false);
  });

  it('honours a custom data key', () => {
    expect(parsePolicyConfigMap(cm('{}', 'p.yaml'), { key: 'p.yaml' }).ok).toBe(true);
  });

  it('reports YAML syntax errors with a line and duplicate keys', () => {
    const bad = parsePolicyConfigMap(cm('grants:\n  ttl: [5m\n'));
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors[0]!.message).toMatch(/not valid YAML/);
    const dup = parsePolicyConfigMap(cm('grants: {ttl: 1m}\ngrants: {ttl: 2m}\n'));
    expect(dup.ok).toBe(false);
  });

  it('refuses a document that is not a mapping', () => {
    expect(parsePolicyConfigMap(cm('- a\n- b\n'))).toEqual({
      ok: false,
      errors: [{ field: 'data["policy.yaml"]', message: expect.stringContaining('mapping') }],
    });
  });

  it('refuses alias bombs and oversized documents', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]']
      .concat(
        Array.from(
          { length: 8 },
          (_, i) =>
            `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
              .fill(`*${String.fromCharCode(97 + i)}`)
              .join(', ')}]`,
        ),
      )
      .join('\n');
    expect(parsePolicyConfigMap(cm(bomb)).ok).toBe(false);
    expect(parsePolicyConfigMap(cm(`# ${'x'.repeat(300 * 1024)}`)).ok).toBe(false);
  });

  it('names nested fields of invalid entries', () => {
    const text = 'autoApproval:\n  rules:\n    - {name: r, when: Sometimes, after: 1h, classes: [Planned]}\n';
    const result = parsePolicyConfigMap(cm(text));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]!.field).toBe('autoApproval.rules[0].when');
  });
});

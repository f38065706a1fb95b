import { readFileSync } from 'node:fs';
import { parse, parseAllDocuments } from 'yaml';
import { DEFAULT_POLICY, POLICY_CONFIGMAP } from './schema.js';
import { mergeOntoDefaults, parseDuration, validatePolicy } from './validate.js';

type WebhookConfiguration = {
  webhooks: { name: string; matchConditions?: { expression: string }[] }[];
};

const defaultYaml = readFileSync(new URL('./default-policy.yaml', import.meta.url), 'utf8');

describe('policy schema', () => {
  it('accepts the built-in default policy', () => {
    expect(validatePolicy(DEFAULT_POLICY)).toEqual({ ok: true, policy: DEFAULT_POLICY });
  });

  it('ships a default ConfigMap whose document equals the built-in defaults', () => {
    const cm = parse(defaultYaml) as {
      metadata: { namespace: string; name: string };
      data: Record<string, string>;
    };
    expect(cm.metadata).toMatchObject({ namespace: POLICY_CONFIGMAP.namespace, name: POLICY_CONFIGMAP.name });
    const doc: unknown = parse(cm.data[POLICY_CONFIGMAP.key]!);
    expect(doc).toEqual(DEFAULT_POLICY);
  });

  it("lets the webhook configuration wave through only identities the default policy's writers name", () => {
    // The configuration admits the controllers' own status writes without calling the webhook; a name
    // there that the policy does not list would be a writer nobody judges.
    const docs = parseAllDocuments(
      readFileSync(new URL('../manifests/webhook/webhooks.yaml', import.meta.url), 'utf8'),
    ).map((d) => d.toJS() as WebhookConfiguration);
    const skipped = (webhook: string) => {
      const entry = docs.flatMap((d) => d.webhooks).find((w) => w.name === webhook);
      const text = (entry?.matchConditions ?? []).map((c) => c.expression).join(' ');
      return [...text.matchAll(/'(system:serviceaccount:[^']+)'/g)].map((m) => m[1]);
    };
    const status = skipped('maintenance-status.contract.maintenance.metal.ironcore.dev');
    const announcements = skipped('claim-announcements.contract.maintenance.metal.ironcore.dev');
    expect(status.length).toBeGreaterThan(0);
    expect(announcements.length).toBeGreaterThan(0);
    for (const name of status) expect(DEFAULT_POLICY.writers.maintenanceStatus).toContain(name);
    for (const name of announcements) expect(DEFAULT_POLICY.writers.announcements).toContain(name);
  });

  it('names the field, the reason and valid values for a malformed duration', () => {
    const result = validatePolicy(mergeOntoDefaults({ classes: { Planned: { deadline: 'a week' } } }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      { field: 'classes.Planned.deadline', message: expect.stringMatching(/"a week".*such as "90s"/) },
    ]);
  });

  it('names the requesters field that is wrong: an empty group, a string for a list, a typo', () => {
    const result = validatePolicy(
      mergeOntoDefaults({ requesters: { operators: { users: 'admin', groups: [''], group: [] } } }),
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const fields = result.errors.map((e) => e.field);
    expect(fields.sort()).toEqual([
      'requesters.operators.group',
      'requesters.operators.groups[0]',
      'requesters.operators.users',
    ]);
  });

  it('lists the valid values of an enum and the known fields on a typo', () => {
    const result = validatePolicy(mergeOntoDefaults({ legacyLabels: { mode: 'ignore' }, grant: {} }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const byField = Object.fromEntries(result.errors.map((e) => [e.field, e.message]));
    expect(byField['legacyLabels.mode']).toMatch(/"ignore".*"translate", "warn", "deny"/);
    expect(byField.grant).toMatch(/not a known field.*grants/);
  });

  it('rejects an unknown time zone, an empty window and duplicate names', () => {
    const w = { name: 'w', days: ['Mon'], start: '22:00', end: '04:00', timeZone: 'Mars/Olympus' };
    const result = validatePolicy(
      mergeOntoDefaults({ windows: [w, { ...w, timeZone: 'UTC', end: '22:00' }] }),
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.field).sort()).toEqual([
      'windows[0].name',
      'windows[0].timeZone',
      'windows[1].end',
      'windows[1].name',
    ]);
  });

  it('rejects minNotice longer than the deadline and a zero grant TTL', () => {
    const result = validatePolicy(
      mergeOntoDefaults({ classes: { Urgent: { minNotice: '48h' } }, grants: { ttl: '0s' } }),
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.field).sort()).toEqual(['classes.Urgent.minNotice', 'grants.ttl']);
  });

  it('merges partial documents onto the defaults, replacing lists and keeping a __proto__ key as a field', () => {
    const merged = mergeOntoDefaults({ windows: [], autoApproval: { rules: [] } }) as typeof DEFAULT_POLICY;
    expect(merged.autoApproval).toEqual({
      consumerLabels: [],
      consumerFieldManagers: ['mcm.ironcore.dev/field-owner'],
      rules: [],
    });
    expect(merged.classes).toEqual(DEFAULT_POLICY.classes);
    const hostile = mergeOntoDefaults(JSON.parse('{"__proto__": {"polluted": true}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const result = validatePolicy(hostile);
    expect(result.ok).toBe(false);
  });

  it.each([
    ['90s', 90_000],
    ['1h30m', 5_400_000],
    ['0.5h', 1_800_000],
    ['250ms', 250],
    ['0s', 0],
  ])('parses the duration %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '10', '1d', 'h', '-5m', '1h 30m'])('refuses the duration %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

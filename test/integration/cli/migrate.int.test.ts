// `kubectl metal` against the real control plane. migrate: the dry run shows a diff and changes
// nothing; --apply converts legacy objects and labels; a second --apply has nothing to do; a legacy
// object is deleted only once its replacement exists (never when the replacement could not be
// made), and takes metal-operator's finalizer off it only when asked. Also cordon, approve, defer
// and status, and the kubectl-metal executable itself.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  LEGACY_MAINTENANCE_FINALIZER,
  type LegacyServerMaintenance,
} from '../../../api/legacy/v1alpha1/servermaintenance.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import type { Announcement } from '../../../api/metal/v1alpha1/serverclaim.js';
import { adminClient, freshNamespace, uniqueName } from '../../../e2e/harness/env.js';
import { REPO_ROOT } from '../../../e2e/harness/control-plane.js';
import { adminKubeconfig } from '../../../e2e/harness/processes.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { api, type Api } from '../../../cli/kube.js';
import { main } from '../../../cli/main.js';
import { MIGRATED_FROM_ANNOTATION } from '../../../cli/migrate.js';

const run = promisify(execFile);
const APPROVED = 'metal.ironcore.dev/maintenance-approved';
const NEEDED = 'metal.ironcore.dev/maintenance-needed';

let admin: KubeClient;
let a: Api;
let ns: string;
const srv = uniqueName('mig');
const server = (n: number) => `${srv}-${n}`;

/** Runs the plugin in-process; returns its exit code and what it printed. */
async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['--kubeconfig', adminKubeconfig(), '--no-color', '-n', ns, ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function legacy(
  name: string,
  spec: Partial<LegacyServerMaintenance['spec']>,
  annotations?: Record<string, string>,
): LegacyServerMaintenance {
  return {
    metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
    spec: { serverRef: { name: server(1) }, ...spec },
  };
}

/** resourceVersion of everything in the namespace and of our servers: changes if anything was written. */
async function snapshot(): Promise<Record<string, string>> {
  const lists: KubeObject[][] = await Promise.all([
    a.legacy.listAll({ namespace: ns }).then((l) => l.items),
    a.maintenances.listAll({ namespace: ns }).then((l) => l.items),
    a.claims.listAll({ namespace: ns }).then((l) => l.items),
    Promise.all([1, 2, 3, 4].map((n) => a.servers.get(server(n)))),
  ]);
  return Object.fromEntries(
    lists
      .flat()
      .map((o) => [
        `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`,
        o.metadata.resourceVersion!,
      ]),
  );
}

const announcement = (uid: string, name: string): Announcement => ({
  maintenanceUID: uid,
  maintenanceName: name,
  maintenanceNamespace: ns,
  reason: 'FirmwareUpdate',
  class: 'Planned',
  announcedAt: '2026-09-01T00:00:00Z',
  deadline: '2099-01-01T00:00:00Z',
  state: 'Announced',
});

beforeAll(async () => {
  admin = await adminClient();
  a = api(admin);
  ns = await freshNamespace(admin, 'migrate');
  for (const n of [1, 2, 3, 4])
    await a.servers.create({
      metadata: { name: server(n) },
      spec: {
        systemUUID: `${srv}-${n}`,
        ...(n === 4 ? { serverMaintenanceRef: { namespace: ns, name: 'finished-long-ago' } } : {}),
      },
    });
  await a.legacy.create(
    legacy(
      'bios',
      {
        policy: 'OwnerApproval',
        priority: 50,
        serverPower: 'Off',
        serverBootConfigurationTemplate: {
          name: 'bios-boot',
          spec: { serverRef: { name: server(1) }, image: 'ghcr.io/os/maint:1' },
        },
      },
      { 'metal.ironcore.dev/maintenance-reason': 'BIOS 2.19.1' },
    ),
  );
  await a.legacy.create(legacy('psu', { policy: 'Enforced', serverRef: { name: server(2) } }));
  // The legacy CRD accepts an empty server name; the typed kind refuses it, so this one cannot be converted.
  await a.legacy.create(legacy('broken', { policy: 'Enforced', serverRef: { name: '' } }));
  const busy = await a.legacy.create(legacy('busy', { serverRef: { name: server(3) } }));
  await a.legacy.patch(
    busy.metadata.name!,
    { status: { state: 'InMaintenance' } },
    { namespace: ns, subresource: 'status' },
  );
  const claim = await a.claims.create({
    metadata: { name: 'c1', namespace: ns, labels: { [APPROVED]: 'true', [NEEDED]: 'true' } },
    spec: { power: 'On', image: 'img', serverRef: { name: server(3) } },
  });
  await a.claims.patch(
    claim.metadata.name!,
    { status: { phase: 'Bound', maintenance: { announcements: [announcement('uid-typed-1', 'typed-1')] } } },
    {
      namespace: ns,
      subresource: 'status',
    },
  );
  await a.claims.create({
    metadata: { name: 'stale', namespace: ns, labels: { [NEEDED]: 'true' } },
    spec: { power: 'On', image: 'img', serverRef: { name: server(4) } },
  });
});

afterAll(async () => {
  await admin?.close();
});

describe('kubectl metal migrate', () => {
  it('dry run (the default) shows the diff, checks it with the server, and changes nothing', async () => {
    const before = await snapshot();
    const { code, out } = await cli('migrate', '--delete-legacy');
    expect(out).toMatch(/dry run: nothing is changed/);
    expect(out).toMatch(
      new RegExp(
        `^\\+ create maintenance\\.metal\\.ironcore\\.dev/v1alpha1 ServerMaintenance ${ns}/bios`,
        'm',
      ),
    );
    expect(out).toMatch(/^\+ +description: BIOS 2\.19\.1$/m);
    expect(out).toMatch(/^\+ +method: Pxe$/m);
    expect(out).toMatch(
      new RegExp(`^- delete metal\\.ironcore\\.dev/v1alpha1 ServerMaintenance ${ns}/psu`, 'm'),
    );
    expect(out).toMatch(/^- +metal\.ironcore\.dev\/maintenance-approved: "true"$/m);
    expect(out).toMatch(/^\+ +- maintenanceUID: uid-typed-1$/m);
    expect(out).toMatch(new RegExp(`clear spec.serverMaintenanceRef ${ns}/finished-long-ago`));
    expect(out).toMatch(/skip .*\/busy: InMaintenance/);
    expect(out).toMatch(/✓ server dry run accepts: create .*\/psu/);
    expect(out).toMatch(/✗ server dry run REFUSES: create .*\/broken/);
    expect(code).toBe(1); // a refused write is worth a non-zero exit, even in a dry run
    expect(await snapshot()).toEqual(before);
    expect((await a.maintenances.list({ namespace: ns })).items).toEqual([]);
  });

  it('--apply converts, keeps every legacy object, and a second --apply has nothing to do', async () => {
    const { code, out } = await cli('migrate', '--apply');
    expect(out).toMatch(/✓ done: create .*\/bios/);
    expect(code).toBe(1); // "broken" cannot be converted
    const bios = await a.maintenances.get('bios', ns);
    const legacyBios = await a.legacy.get('bios', ns);
    expect(bios.metadata.annotations?.[MIGRATED_FROM_ANNOTATION]).toBe(legacyBios.metadata.uid);
    expect(bios.spec).toMatchObject({
      serverRef: { name: server(1) },
      reason: 'Other',
      description: 'BIOS 2.19.1',
      priority: 50,
      approval: { required: true },
      boot: { image: 'ghcr.io/os/maint:1', method: 'Pxe' },
    });
    expect((await a.maintenances.get('psu', ns)).spec.approval).toEqual({ required: false });
    expect(await a.maintenances.find('busy', ns)).toBeUndefined();
    expect((await a.legacy.list({ namespace: ns })).items.map((l) => l.metadata.name).sort()).toEqual([
      'bios',
      'broken',
      'busy',
      'psu',
    ]);
    const c1 = await a.claims.get('c1', ns);
    expect(c1.spec.maintenance?.approvals?.map((x) => x.maintenanceUID)).toEqual(['uid-typed-1']);
    expect(c1.metadata.labels?.[APPROVED]).toBeUndefined();
    expect(c1.metadata.labels?.[NEEDED]).toBe('true'); // a legacy maintenance (busy) still holds its server
    expect((await a.claims.get('stale', ns)).metadata.labels?.[NEEDED]).toBeUndefined();
    expect((await a.servers.get(server(4))).spec.serverMaintenanceRef).toBeUndefined();

    const before = await snapshot();
    const again = await cli('migrate', '--apply');
    expect(again.out).not.toMatch(/✓ done/);
    expect(again.out).toMatch(/2 already migrated/);
    expect(await snapshot()).toEqual(before);
  });

  it('--delete-legacy deletes only legacy objects whose replacement exists', async () => {
    const { code, out } = await cli('migrate', '--apply', '--delete-legacy');
    expect(code).toBe(1);
    expect(out).toMatch(/✓ done: delete .*\/bios/);
    expect(out).toMatch(/✓ done: delete .*\/psu/);
    const left = (await a.legacy.list({ namespace: ns })).items.map((l) => l.metadata.name).sort();
    expect(left).toEqual(['broken', 'busy']);
    expect((await a.maintenances.list({ namespace: ns })).items.map((m) => m.metadata.name).sort()).toEqual([
      'bios',
      'psu',
    ]);
    const last = await cli('migrate', '--apply', '--delete-legacy');
    // Its replacement never came to exist, so the delete is refused and the object stays.
    expect(last.out).toMatch(/✗ FAILED: delete .*\/broken .*METAL_ERR_CLI_NO_REPLACEMENT/);
    expect(last.out).not.toMatch(/✓ done/);
    expect(await a.legacy.find('broken', ns)).toBeDefined();
  });

  it("--remove-legacy-finalizer takes metal-operator's finalizer off deleted legacy objects, and no other", async () => {
    const OTHER = 'example.com/keep';
    for (const [name, finalizers] of [
      ['fin-only', [LEGACY_MAINTENANCE_FINALIZER]],
      ['fin-other', [LEGACY_MAINTENANCE_FINALIZER, OTHER]],
    ] as const)
      await a.legacy.create({
        ...legacy(name, { policy: 'Enforced' }),
        metadata: { name, namespace: ns, finalizers: [...finalizers] },
      });

    const usage = await cli('migrate', '--apply', '--remove-legacy-finalizer');
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/--remove-legacy-finalizer needs --delete-legacy/);

    const before = await snapshot();
    const dry = await cli('migrate', '--delete-legacy', '--remove-legacy-finalizer');
    expect(dry.out).toMatch(/✓ server dry run accepts: delete .*\/fin-only/);
    expect(await snapshot()).toEqual(before);

    const { out } = await cli('migrate', '--apply', '--delete-legacy', '--remove-legacy-finalizer');
    // Gone at once: nothing left to wait for.
    expect(out).toMatch(
      /✓ done: delete .*\/fin-only \(.*\) — finalizer metal\.ironcore\.dev\/servermaintenance removed$/m,
    );
    expect(out).toMatch(
      new RegExp(
        `✓ done: delete .*/fin-other \\(.*\\) — finalizer .* removed; terminating until ${OTHER} is removed`,
      ),
    );
    expect(await a.legacy.find('fin-only', ns)).toBeUndefined();
    const other = await a.legacy.get('fin-other', ns);
    expect(other.metadata.deletionTimestamp).toBeDefined();
    expect(other.metadata.finalizers).toEqual([OTHER]);
    expect(
      (await a.maintenances.get('fin-only', ns)).metadata.annotations?.[MIGRATED_FROM_ANNOTATION],
    ).toBeDefined();
    await a.legacy.patch('fin-other', { metadata: { finalizers: null } }, { namespace: ns });
  });
});

describe('kubectl metal cordon, approve, defer, status', () => {
  it('cordons and uncordons a server (spec.unclaimable), idempotently', async () => {
    expect((await cli('cordon', server(1))).out).toMatch(/cordoned/);
    expect((await a.servers.get(server(1))).spec.unclaimable).toBe(true);
    expect((await cli('cordon', server(1))).out).toMatch(/already cordoned/);
    expect((await cli('uncordon', server(1))).code).toBe(0);
    expect((await a.servers.get(server(1))).spec.unclaimable).toBe(false);
  });

  it('approves an announced maintenance by name, refuses an unannounced one, defers within the deadline only', async () => {
    await a.claims.patch(
      'stale',
      {
        status: {
          maintenance: { announcements: [announcement('uid-x', 'fw-x'), announcement('uid-y', 'fw-y')] },
        },
      },
      {
        namespace: ns,
        subresource: 'status',
      },
    );
    const ok = await cli('approve', 'stale', 'fw-x');
    expect(ok.code).toBe(0);
    expect(
      (await a.claims.get('stale', ns)).spec.maintenance?.approvals?.map((x) => x.maintenanceUID),
    ).toEqual(['uid-x']);
    const bad = await cli('approve', 'stale', 'fw-nope');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/METAL_ERR_CLI_NOT_ANNOUNCED/);
    expect((await cli('defer', 'stale', 'fw-y', '--until', '2h', '--reason', 'batch run')).code).toBe(0);
    const deferral = (await a.claims.get('stale', ns)).spec.maintenance?.deferrals?.[0];
    expect(deferral).toMatchObject({ maintenanceUID: 'uid-y', reason: 'batch run' });
    const late = await cli('defer', 'stale', 'fw-y', '--until', '2100-01-01T00:00:00Z');
    expect(late.err).toMatch(/METAL_ERR_CLI_DEFER_PAST_DEADLINE/);
    expect((await cli('approve', 'stale', '--all')).code).toBe(0);
    const after = (await a.claims.get('stale', ns)).spec.maintenance;
    expect(after?.approvals?.map((x) => x.maintenanceUID)).toEqual(['uid-x', 'uid-y']);
    expect(after?.deferrals).toBeUndefined();
  });

  it('runs as the kubectl-metal executable: status shows the migrated maintenances; usage errors exit 2', async () => {
    const bin = join(REPO_ROOT, 'cli', 'kubectl-metal.mjs');
    const { stdout } = await run(bin, ['--kubeconfig', adminKubeconfig(), '-n', ns, 'status'], { cwd: '/' });
    expect(stdout).toMatch(/^MAINTENANCES$/m);
    expect(stdout).toMatch(new RegExp(`^${ns}\\s+bios\\s+${server(1)}\\s+Pending`, 'm'));
    expect(stdout).toMatch(/servers: /);
    const usage = await run(bin, ['defer', 'c1'], { cwd: '/' }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(usage).toMatchObject({ code: 2 });
  }, 60_000);
});

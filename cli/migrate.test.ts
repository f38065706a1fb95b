// The migration plan: conversion of each legacy field, which objects are converted or left alone,
// label conversion on claims, dangling references, and that a migrated cluster plans nothing.
import { describe, expect, it } from '@jest/globals';
import type { LegacyServerMaintenance } from '../api/legacy/v1alpha1/servermaintenance.js';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerClaim, Announcement } from '../api/metal/v1alpha1/serverclaim.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import { kindFor } from '../api/registry.js';
import { validateObject, formatFieldErrors } from '../api/schema/validate.js';
import {
  LEGACY_NEEDED_LABEL,
  MIGRATED_FROM_ANNOTATION,
  claimAfter,
  convertLegacy,
  planMigration,
  serverAfter,
  type MigrationAction,
  type MigrationInput,
} from './migrate.js';
import { renderPlan, summary } from './migrate-render.js';
import { painter } from './output.js';

const APPROVED = 'metal.ironcore.dev/maintenance-approved';

function legacy(
  name: string,
  spec: Partial<LegacyServerMaintenance['spec']> = {},
  state?: string,
  meta: object = {},
): LegacyServerMaintenance {
  return {
    apiVersion: 'metal.ironcore.dev/v1alpha1',
    kind: 'ServerMaintenance',
    metadata: { name, namespace: 'ops', uid: `uid-${name}`, ...meta },
    spec: { serverRef: { name: `srv-${name}` }, ...spec },
    ...(state ? { status: { state } } : {}),
  };
}

function claim(
  name: string,
  server: string,
  labels: Record<string, string> = {},
  announcements: Announcement[] = [],
  approvals: string[] = [],
): ServerClaim {
  return {
    metadata: { name, namespace: 'tenant-a', labels, uid: `claim-${name}` },
    spec: {
      power: 'On',
      image: 'img',
      serverRef: { name: server },
      ...(approvals.length
        ? { maintenance: { approvals: approvals.map((u) => ({ maintenanceUID: u })) } }
        : {}),
    },
    status: { phase: 'Bound', maintenance: { announcements } },
  };
}

function announcement(uid: string, name = uid): Announcement {
  return {
    maintenanceUID: uid,
    maintenanceName: name,
    maintenanceNamespace: 'ops',
    reason: 'Other',
    class: 'Planned',
    announcedAt: '2026-09-01T00:00:00Z',
    state: 'Announced',
  };
}

const input = (o: Partial<MigrationInput>): MigrationInput => ({
  legacy: [],
  typed: [],
  claims: [],
  servers: [],
  deleteLegacy: false,
  ...o,
});

/** What applying the plan's creates would leave behind (as the API server would store them). */
function afterCreates(actions: MigrationAction[]): ServerMaintenance[] {
  return actions.flatMap((a) =>
    a.kind === 'create'
      ? [{ ...a.object, metadata: { ...a.object.metadata, uid: `new-${a.object.metadata.name}` } }]
      : [],
  );
}

describe('convertLegacy', () => {
  it('carries every upstream field the typed kind has, per the WS3 table, and validates', () => {
    const l = legacy(
      'bios',
      {
        policy: 'OwnerApproval',
        priority: 50,
        locatorLED: 'Blinking',
        serverPower: 'On',
        serverBootConfigurationTemplate: {
          name: 'b',
          spec: {
            serverRef: { name: 'srv-bios' },
            image: 'ghcr.io/os:1',
            ignitionSecretRef: { name: 'ign' },
          },
        },
      },
      'Pending',
      { annotations: { 'metal.ironcore.dev/maintenance-reason': 'BIOS 2.19' }, labels: { team: 'fw' } },
    );
    const { object, notes } = convertLegacy(l);
    expect(object.spec).toEqual({
      serverRef: { name: 'srv-bios' },
      reason: 'Other',
      description: 'BIOS 2.19',
      priority: 50,
      locatorLED: 'Blinking',
      policy: 'OwnerApproval',
      approval: { required: true },
      boot: { image: 'ghcr.io/os:1', method: 'Pxe' },
    });
    expect(object.metadata.labels).toEqual({ team: 'fw', 'maintenance.metal.ironcore.dev/migrated': 'true' });
    expect(object.metadata.annotations?.[MIGRATED_FROM_ANNOTATION]).toBe('uid-bios');
    expect(notes.join('\n')).toMatch(/serverPower On dropped/);
    expect(notes.join('\n')).toMatch(/ignitionSecretRef ign dropped/);
    const result = validateObject(kindFor(object.apiVersion!, object.kind!)!, object);
    expect(result.ok ? 'valid' : formatFieldErrors(result.errors)).toBe('valid');
  });

  it('maps Enforced to no approval, reads the older reason annotation, and leaves an unknown policy to the default', () => {
    expect(convertLegacy(legacy('a', { policy: 'Enforced' })).object.spec.approval).toEqual({
      required: false,
    });
    const old = convertLegacy(
      legacy('b', {}, undefined, { annotations: { 'metal.ironcore.dev/reason': 'PSU' } }),
    );
    expect(old.object.spec.description).toBe('PSU');
    const odd = convertLegacy(legacy('c', { policy: 'Sometimes' }));
    expect(odd.object.spec.approval).toBeUndefined();
    expect(odd.object.spec.policy).toBeUndefined();
    expect(odd.notes[0]).toMatch(/Sometimes/);
  });
});

describe('planMigration: legacy objects', () => {
  it('converts Pending (and state-less) objects and leaves InMaintenance, Failed, ignored and deleting ones', () => {
    const plan = planMigration(
      input({
        legacy: [
          legacy('p', {}, 'Pending'),
          legacy('new'),
          legacy('busy', {}, 'InMaintenance'),
          legacy('dead', {}, 'Failed'),
          legacy('skip', {}, 'Pending', { annotations: { 'metal.ironcore.dev/operation': 'ignore' } }),
          legacy('going', {}, 'Pending', { deletionTimestamp: '2026-09-01T00:00:00Z' }),
        ],
      }),
    );
    expect(plan.actions.map((a) => (a.kind === 'create' ? a.object.metadata.name : a.kind))).toEqual([
      'new',
      'p',
    ]);
    expect(plan.skipped.map((s) => s.why.split(':')[0])).toEqual([
      'InMaintenance',
      'Failed',
      'being deleted',
      'annotated metal.ironcore.dev/operation',
    ]);
  });

  it('deletes legacy objects only with --delete-legacy, and lists each delete after the creates', () => {
    const l = [legacy('a'), legacy('b')];
    expect(planMigration(input({ legacy: l })).actions.some((a) => a.kind === 'deleteLegacy')).toBe(false);
    const kinds = planMigration(input({ legacy: l, deleteLegacy: true })).actions.map((a) => a.kind);
    expect(kinds).toEqual(['create', 'create', 'deleteLegacy', 'deleteLegacy']);
  });

  it('is idempotent: after its creates, a second plan has nothing to do', () => {
    const l = [legacy('a', { policy: 'Enforced' }), legacy('b')];
    const first = planMigration(input({ legacy: l }));
    const second = planMigration(input({ legacy: l, typed: afterCreates(first.actions) }));
    expect(second.actions).toEqual([]);
    expect(second.upToDate).toHaveLength(2);
    expect(summary(second)).toMatch(/^Nothing to do \(2 already migrated/);
  });

  it('with --delete-legacy on a migrated cluster plans only the deletes, and nothing once they are gone', () => {
    const l = [legacy('a')];
    const typed = afterCreates(planMigration(input({ legacy: l })).actions);
    const again = planMigration(input({ legacy: l, typed, deleteLegacy: true }));
    expect(again.actions.map((a) => a.kind)).toEqual(['deleteLegacy']);
    expect(planMigration(input({ legacy: [], typed, deleteLegacy: true })).actions).toEqual([]);
  });

  it('never touches a typed object of the same name that was not converted from it', () => {
    const foreign: ServerMaintenance = {
      metadata: { name: 'a', namespace: 'ops', uid: 'x' },
      spec: { serverRef: { name: 'srv-a' } },
    };
    const plan = planMigration(input({ legacy: [legacy('a')], typed: [foreign], deleteLegacy: true }));
    expect(plan.actions).toEqual([]);
    expect(plan.skipped[0]?.why).toMatch(/was not converted from it/);
  });
});

describe('planMigration: labels and references', () => {
  it('turns the approval label into typed approvals of what is announced and drops the label', () => {
    const c = claim('c1', 'srv-x', { [APPROVED]: 'true' }, [announcement('m1'), announcement('m2')], ['m1']);
    const plan = planMigration(input({ claims: [c] }));
    expect(plan.actions).toHaveLength(1);
    const action = plan.actions[0]!;
    expect(action.kind).toBe('updateClaim');
    if (action.kind !== 'updateClaim') return;
    expect(action.approvals).toEqual([{ maintenanceUID: 'm2', maintenanceName: 'm2' }]);
    const after = claimAfter(c, action)!;
    expect(after.spec.maintenance?.approvals?.map((a) => a.maintenanceUID)).toEqual(['m1', 'm2']);
    expect(after.metadata.labels?.[APPROVED]).toBeUndefined();
    expect(planMigration(input({ claims: [after] })).actions).toEqual([]);
  });

  it('keeps the approval label while a maintenance of its server is not announced yet, and says so', () => {
    const c = claim('c1', 'srv-a', { [APPROVED]: 'true' }, [announcement('m1')]);
    const plan = planMigration(input({ claims: [c], legacy: [legacy('a')] }));
    const update = plan.actions.find((a) => a.kind === 'updateClaim');
    expect(update && update.kind === 'updateClaim' && update.removeLabels).toEqual([]);
    expect(plan.pending[0]).toMatch(/not yet announced/);
    // Typed but not announced counts too.
    const typed: ServerMaintenance = {
      metadata: { name: 't', namespace: 'ops', uid: 't1' },
      spec: { serverRef: { name: 'srv-a' } },
    };
    const later = planMigration(
      input({ claims: [claim('c2', 'srv-a', { [APPROVED]: 'true' })], typed: [typed] }),
    );
    expect(later.actions).toEqual([]);
    expect(later.pending).toHaveLength(1);
  });

  it('removes a stale maintenance-needed label, and keeps it while a maintenance exists', () => {
    const stale = claim('c1', 'srv-x', { [LEGACY_NEEDED_LABEL]: 'true' });
    const kept = claim('c2', 'srv-a', { [LEGACY_NEEDED_LABEL]: 'true' });
    const plan = planMigration(input({ claims: [stale, kept], legacy: [legacy('a', {}, 'InMaintenance')] }));
    expect(plan.actions.map((a) => (a.kind === 'updateClaim' ? a.claim.metadata.name : a.kind))).toEqual([
      'c1',
    ]);
  });

  it('clears a legacy serverMaintenanceRef only when the legacy object is gone', () => {
    const server = (name: string, ref?: { namespace: string; name: string }): Server => ({
      metadata: { name },
      spec: { systemUUID: name, ...(ref ? { serverMaintenanceRef: ref } : {}) },
    });
    const servers = [
      server('s1', { namespace: 'ops', name: 'a' }),
      server('s2', { namespace: 'ops', name: 'gone' }),
      server('s3'),
    ];
    const plan = planMigration(input({ servers, legacy: [], allLegacy: [legacy('a', {}, 'InMaintenance')] }));
    expect(plan.actions).toEqual([
      { kind: 'clearRef', server: servers[1], ref: { namespace: 'ops', name: 'gone' } },
    ]);
    expect(
      serverAfter(servers[1]!, { namespace: 'ops', name: 'gone' })?.spec.serverMaintenanceRef,
    ).toBeUndefined();
    expect(serverAfter(servers[0]!, { namespace: 'ops', name: 'gone' })).toBeUndefined();
  });
});

describe('renderPlan', () => {
  it('shows creates with +, deletes with -, claim edits as a diff, and the summary', () => {
    const c = claim('c1', 'srv-x', { [APPROVED]: 'true' }, [announcement('m9')]);
    const text = renderPlan(
      planMigration(
        input({ legacy: [legacy('a', { serverPower: 'Off' })], claims: [c], deleteLegacy: true }),
      ),
      painter(false),
    );
    expect(text).toMatch(/^\+ create maintenance\.metal\.ironcore\.dev\/v1alpha1 ServerMaintenance ops\/a/m);
    expect(text).toMatch(/^\+ {5}kind: ServerMaintenance$/m);
    expect(text).toMatch(/^- delete metal\.ironcore\.dev\/v1alpha1 ServerMaintenance ops\/a/m);
    expect(text).toMatch(/^- {9}metal\.ironcore\.dev\/maintenance-approved: "true"$/m);
    expect(text).toMatch(/^\+ +- maintenanceUID: m9$/m);
    expect(text).toMatch(/note: serverPower Off dropped/);
    expect(text).toMatch(
      /Plan: 1 to create, 1 legacy to delete, 1 claim update\(s\), 0 server reference\(s\) to clear/,
    );
  });
});

// `kubectl metal migrate`, the decision part: from what the cluster holds (legacy
// metal.ironcore.dev ServerMaintenances, typed ServerMaintenances, claims, servers) to a plan of
// writes. Pure, so the plan can be shown as a diff before anything changes, and so that a second
// run over the migrated cluster plans nothing.
//
// Mapping (docs/proposals/ws3-servermaintenance.md, "Migration and deprecation"):
//   serverRef, priority, locatorLED   -> same
//   policy                            -> approval.required (OwnerApproval true, Enforced false); policy kept
//   maintenance-reason annotation     -> description; reason Other
//   serverPower                       -> dropped (a held server is parked, i.e. off)
//   serverBootConfigurationTemplate   -> boot {method: Pxe, image}
// Only Pending legacy objects are converted; InMaintenance ones finish under metal-operator (our
// webhook respects them as holders), Failed ones are terminal.
import type { LegacyServerMaintenance } from '../api/legacy/v1alpha1/servermaintenance.js';
import {
  LEGACY_REASON_ANNOTATION,
  LEGACY_REASON_ANNOTATION_OLD,
  LegacyServerMaintenanceKind,
} from '../api/legacy/v1alpha1/servermaintenance.js';
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { MaintenanceApproval, ServerClaim } from '../api/metal/v1alpha1/serverclaim.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import { LEGACY_APPROVED_LABEL, translatedApprovals } from '../contract/legacy-labels.js';

/** On a converted object: the uid of the legacy object it replaces. Makes re-runs idempotent. */
export const MIGRATED_FROM_ANNOTATION = 'maintenance.metal.ironcore.dev/migrated-from-uid';
/** On a converted object, for selection: `kubectl get sm -l maintenance.metal.ironcore.dev/migrated`. */
export const MIGRATED_LABEL = 'maintenance.metal.ironcore.dev/migrated';
/** Upstream's announce label on claims; mirrored by the approval controller during the legacy window. */
export const LEGACY_NEEDED_LABEL = 'metal.ironcore.dev/maintenance-needed';
export const IGNORE_OPERATION = { key: 'metal.ironcore.dev/operation', value: 'ignore' } as const;

export interface NamespacedName {
  namespace: string;
  name: string;
}

export type MigrationAction =
  | { kind: 'create'; legacy: LegacyServerMaintenance; object: ServerMaintenance; notes: string[] }
  | { kind: 'deleteLegacy'; legacy: LegacyServerMaintenance; replacement: NamespacedName }
  | {
      kind: 'updateClaim';
      claim: ServerClaim;
      approvals: MaintenanceApproval[];
      removeLabels: LabelRemoval[];
    }
  | { kind: 'clearRef'; server: Server; ref: NamespacedName };

export interface LabelRemoval {
  label: string;
  why: string;
}

export interface MigrationPlan {
  actions: MigrationAction[];
  /** Legacy objects whose replacement exists already. */
  upToDate: string[];
  /** Objects left alone, and why. */
  skipped: { object: string; why: string }[];
  /** Work that becomes possible later (e.g. approvals once a maintenance is announced). */
  pending: string[];
}

export interface MigrationInput {
  /** Legacy objects to convert (possibly one namespace only). */
  legacy: readonly LegacyServerMaintenance[];
  /** Every legacy object in the cluster, for the dangling-reference check; default `legacy`. */
  allLegacy?: readonly LegacyServerMaintenance[];
  typed: readonly ServerMaintenance[];
  claims: readonly ServerClaim[];
  servers: readonly Server[];
  deleteLegacy: boolean;
}

const idOf = (o: { metadata: { namespace?: string; name?: string } }) =>
  `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** The typed object that replaces a legacy one, and what the conversion could not carry. */
export function convertLegacy(legacy: LegacyServerMaintenance): {
  object: ServerMaintenance;
  notes: string[];
} {
  const annotations = legacy.metadata.annotations ?? {};
  const reasonText = annotations[LEGACY_REASON_ANNOTATION] ?? annotations[LEGACY_REASON_ANNOTATION_OLD];
  const { spec, notes } = convertSpec(legacy.spec, reasonText);
  const object: ServerMaintenance = {
    apiVersion: ServerMaintenanceKind.apiVersion,
    kind: ServerMaintenanceKind.kind,
    metadata: {
      name: legacy.metadata.name,
      namespace: legacy.metadata.namespace,
      labels: { ...legacy.metadata.labels, [MIGRATED_LABEL]: 'true' },
      annotations: {
        ...(reasonText !== undefined ? { [LEGACY_REASON_ANNOTATION]: reasonText } : {}),
        [MIGRATED_FROM_ANNOTATION]: legacy.metadata.uid ?? '',
      },
      ...(legacy.metadata.ownerReferences?.length
        ? { ownerReferences: legacy.metadata.ownerReferences }
        : {}),
    },
    spec,
  };
  return { object, notes };
}

function convertSpec(
  legacy: LegacyServerMaintenance['spec'],
  reasonText: string | undefined,
): { spec: ServerMaintenance['spec']; notes: string[] } {
  const notes: string[] = [];
  const spec: ServerMaintenance['spec'] = { serverRef: { name: legacy.serverRef.name }, reason: 'Other' };
  if (reasonText) spec.description = reasonText.slice(0, 1024);
  if (legacy.priority !== undefined) spec.priority = legacy.priority;
  if (legacy.locatorLED !== undefined) spec.locatorLED = legacy.locatorLED;
  if (legacy.policy === 'OwnerApproval' || legacy.policy === 'Enforced') {
    const enforced = legacy.policy === 'Enforced';
    spec.policy = enforced ? 'Enforced' : 'OwnerApproval';
    spec.approval = { required: !enforced };
  } else if (legacy.policy) {
    notes.push(
      `policy "${legacy.policy}" is not one upstream understands; approval follows the policy default`,
    );
  }
  if (legacy.serverPower)
    notes.push(`serverPower ${legacy.serverPower} dropped: a held server is parked (powered off)`);
  const template = legacy.serverBootConfigurationTemplate;
  if (template?.spec.image) spec.boot = { image: template.spec.image, method: 'Pxe' };
  if (template?.spec.ignitionSecretRef)
    notes.push(
      `boot template ignitionSecretRef ${template.spec.ignitionSecretRef.name} dropped: spec.boot has no field for it`,
    );
  return { spec, notes };
}

/** Whether `typed` was converted from `legacy` (same uid recorded). */
export function isReplacementOf(typed: ServerMaintenance, legacy: LegacyServerMaintenance): boolean {
  return (
    !!legacy.metadata.uid && typed.metadata.annotations?.[MIGRATED_FROM_ANNOTATION] === legacy.metadata.uid
  );
}

interface LegacyPlan {
  creates: MigrationAction[];
  deletes: MigrationAction[];
  /** Servers that get a maintenance from this run (not announced to anyone yet). */
  newForServer: Set<string>;
}

function planLegacy(input: MigrationInput, plan: MigrationPlan): LegacyPlan {
  const typedById = new Map(input.typed.map((t) => [idOf(t), t]));
  const out: LegacyPlan = { creates: [], deletes: [], newForServer: new Set() };
  const sorted = [...input.legacy].sort((a, b) => idOf(a).localeCompare(idOf(b)));
  for (const legacy of sorted) {
    const id = idOf(legacy);
    const label = `${LegacyServerMaintenanceKind.apiVersion} ServerMaintenance ${id}`;
    const existing = typedById.get(id);
    const replacement = { namespace: legacy.metadata.namespace ?? '', name: legacy.metadata.name ?? '' };
    if (existing && isReplacementOf(existing, legacy)) {
      plan.upToDate.push(label);
      if (input.deleteLegacy && !legacy.metadata.deletionTimestamp)
        out.deletes.push({ kind: 'deleteLegacy', legacy, replacement });
      continue;
    }
    if (existing) {
      plan.skipped.push({
        object: label,
        why: `a ${ServerMaintenanceKind.apiVersion} ServerMaintenance of that name exists and was not converted from it`,
      });
      continue;
    }
    const why = whyNotConvert(legacy);
    if (why) {
      plan.skipped.push({ object: label, why });
      continue;
    }
    const { object, notes } = convertLegacy(legacy);
    out.creates.push({ kind: 'create', legacy, object, notes });
    out.newForServer.add(legacy.spec.serverRef.name);
    if (input.deleteLegacy) out.deletes.push({ kind: 'deleteLegacy', legacy, replacement });
  }
  return out;
}

function whyNotConvert(legacy: LegacyServerMaintenance): string | undefined {
  if (legacy.metadata.deletionTimestamp) return 'being deleted';
  if (legacy.metadata.annotations?.[IGNORE_OPERATION.key] === IGNORE_OPERATION.value)
    return `annotated ${IGNORE_OPERATION.key}: ${IGNORE_OPERATION.value}`;
  const state = legacy.status?.state ?? 'Pending';
  if (state === 'InMaintenance')
    return 'InMaintenance: left to finish under metal-operator (our webhook treats it as the holder)';
  if (state === 'Failed') return 'Failed: terminal, nothing to convert';
  return undefined;
}

/** Servers with a maintenance that still matters to a claim: typed (not finished) or legacy (not failed). */
function serversWithMaintenance(input: MigrationInput, extra: Set<string>): Set<string> {
  const out = new Set(extra);
  for (const t of input.typed) {
    const s = t.status?.state;
    if (s !== 'Completed' && s !== 'Failed') out.add(t.spec.serverRef.name);
  }
  for (const l of input.allLegacy ?? input.legacy)
    if (l.status?.state !== 'Failed') out.add(l.spec.serverRef.name);
  return out;
}

function planClaims(
  input: MigrationInput,
  plan: MigrationPlan,
  newForServer: Set<string>,
): MigrationAction[] {
  const actions: MigrationAction[] = [];
  const busy = serversWithMaintenance(input, newForServer);
  const sorted = [...input.claims].sort((a, b) => idOf(a).localeCompare(idOf(b)));
  for (const claim of sorted) {
    const labels = claim.metadata.labels ?? {};
    const server = claim.spec.serverRef?.name;
    let approvals: MaintenanceApproval[] = [];
    const removeLabels: LabelRemoval[] = [];
    if (labels[LEGACY_APPROVED_LABEL] === 'true') {
      // What the label stands for: every announced maintenance not yet approved (as the webhook translates it).
      approvals = translatedApprovals(claim, claim);
      if (unannouncedFor(input, claim, newForServer) > 0)
        plan.pending.push(
          `ServerClaim ${idOf(claim)}: label ${LEGACY_APPROVED_LABEL} also approves maintenances not yet announced; run migrate again once they are`,
        );
      else
        removeLabels.push({
          label: LEGACY_APPROVED_LABEL,
          why: approvals.length ? 'converted into typed approvals' : 'nothing announced is left to approve',
        });
    }
    if (labels[LEGACY_NEEDED_LABEL] === 'true' && (!server || !busy.has(server)))
      removeLabels.push({ label: LEGACY_NEEDED_LABEL, why: 'no maintenance exists for its server (stale)' });
    if (approvals.length || removeLabels.length)
      actions.push({ kind: 'updateClaim', claim, approvals, removeLabels });
  }
  return actions;
}

/** Maintenances of the claim's server not yet announced to it: created by this run, or not reached yet. */
function unannouncedFor(input: MigrationInput, claim: ServerClaim, newForServer: Set<string>): number {
  const server = claim.spec.serverRef?.name;
  if (!server) return 0;
  const announced = new Set((claim.status?.maintenance?.announcements ?? []).map((a) => a.maintenanceUID));
  const typed = input.typed.filter(
    (t) => t.spec.serverRef.name === server && t.metadata.uid && !announced.has(t.metadata.uid) && !isDone(t),
  ).length;
  return typed + (newForServer.has(server) ? 1 : 0);
}

function isDone(t: ServerMaintenance): boolean {
  return !!t.metadata.deletionTimestamp || t.status?.state === 'Completed' || t.status?.state === 'Failed';
}

/** Servers whose legacy spec.serverMaintenanceRef names a legacy object that no longer exists. */
function planDanglingRefs(input: MigrationInput): MigrationAction[] {
  const legacyIds = new Set((input.allLegacy ?? input.legacy).map(idOf));
  const actions: MigrationAction[] = [];
  for (const server of [...input.servers].sort((a, b) =>
    (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  )) {
    const ref = server.spec.serverMaintenanceRef;
    if (ref && !legacyIds.has(`${ref.namespace}/${ref.name}`))
      actions.push({ kind: 'clearRef', server, ref });
  }
  return actions;
}

export function planMigration(input: MigrationInput): MigrationPlan {
  const plan: MigrationPlan = { actions: [], upToDate: [], skipped: [], pending: [] };
  const legacy = planLegacy(input, plan);
  plan.actions = [
    ...legacy.creates,
    ...legacy.deletes,
    ...planClaims(input, plan, legacy.newForServer),
    ...planDanglingRefs(input),
  ];
  return plan;
}

/**
 * The claim after an updateClaim action: used for the diff and, inside a compare-and-swap update, for
 * the write itself. Undefined when the claim already looks like that.
 */
export function claimAfter(
  claim: ServerClaim,
  action: Extract<MigrationAction, { kind: 'updateClaim' }>,
): ServerClaim | undefined {
  const next = structuredClone(claim);
  let changed = false;
  if (action.approvals.length) {
    const approvals = ((next.spec.maintenance ??= {}).approvals ??= []);
    for (const a of action.approvals) {
      if (approvals.some((x) => x.maintenanceUID === a.maintenanceUID)) continue;
      approvals.push(a);
      changed = true;
    }
  }
  for (const { label } of action.removeLabels) {
    if (next.metadata.labels?.[label] === undefined) continue;
    delete next.metadata.labels[label];
    changed = true;
  }
  return changed ? next : undefined;
}

/** The server after clearing a dangling legacy reference; undefined when it no longer names that object. */
export function serverAfter(server: Server, ref: NamespacedName): Server | undefined {
  const current = server.spec.serverMaintenanceRef;
  if (!current || current.namespace !== ref.namespace || current.name !== ref.name) return undefined;
  const next = structuredClone(server);
  delete next.spec.serverMaintenanceRef;
  return next;
}

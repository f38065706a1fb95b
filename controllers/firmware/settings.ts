// BIOSSettings / BMCSettings: the settingsFlow items in priority order; per item only attributes
// that differ from the running values are written (and those already pending are not written
// again), then the server (BIOS) or the BMC is reset inside the maintenance and every attribute is
// read back. Read-only or unknown attributes are refused before any maintenance is requested.
//
//   Pending -> RequestingMaintenance -> WaitingForMaintenance -> Staging <-> Rebooting -> Applied
import type { SettingsFlowItem } from '../../api/firmware/common.js';
import type { FirmwareAction } from './model.js';
import { rfc3339 } from '../../contract/time.js';
import type { Draft } from './draft.js';
import { poll, valueHash } from './flow.js';
import {
  ConditionTypes as C,
  TARGET,
  type Decision,
  type FirmwareWorld,
  type SettingsObject,
} from './model.js';
import type { AttributeView, FirmwareObservation } from './port.js';

/** The flow in the order it runs: priority, then name (the CRD keeps names unique). */
export function orderedFlow(obj: SettingsObject): SettingsFlowItem[] {
  return [...(obj.spec.settingsFlow ?? [])].sort(
    (a, b) => a.priority - b.priority || a.name.localeCompare(b.name),
  );
}

export function attributeNames(obj: SettingsObject): string[] {
  return [...new Set(orderedFlow(obj).flatMap((i) => Object.keys(i.settings ?? {})))];
}

const show = (v: unknown) => (v === undefined ? 'unset' : JSON.stringify(v));

/** Attributes of `item` whose running value differs from the requested one. */
export function differing(item: SettingsFlowItem, attrs: AttributeView): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(item.settings ?? {})) if (String(attrs.current[k]) !== v) out[k] = v;
  return out;
}

function itemKey(item: SettingsFlowItem, attr: string): string {
  return `${item.name}/${attr}`;
}

/** Whether the status records `item` as applied (flowState for BIOS, appliedETags for BMC). */
export function itemApplied(d: Draft, item: SettingsFlowItem): boolean {
  if (d.kind === 'BIOSSettings')
    return d.status.flowState?.some((f) => f.name === item.name && f.flowState === 'Applied') ?? false;
  return Object.entries(item.settings ?? {}).every(
    ([k, v]) => d.status.appliedETags?.[itemKey(item, k)]?.valueHash === valueHash(v),
  );
}

function record(
  d: Draft,
  item: SettingsFlowItem,
  state: 'InProgress' | 'Applied',
  attrs?: AttributeView,
): void {
  const now = rfc3339(d.ctx.now);
  if (d.kind === 'BIOSSettings') {
    const rest = (d.status.flowState ?? []).filter((f) => f.name !== item.name);
    const entry = {
      name: item.name,
      priority: item.priority,
      flowState: state,
      ...(state === 'Applied' ? { lastAppliedTime: now } : {}),
    };
    d.status.flowState = [...rest, entry].sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0));
  } else if (state === 'Applied') {
    const tags = { ...d.status.appliedETags };
    for (const [k, v] of Object.entries(item.settings ?? {}))
      tags[itemKey(item, k)] = { uri: attrs?.uri, etag: attrs?.etag, valueHash: valueHash(v) };
    d.status.appliedETags = tags;
  }
  if (state === 'Applied')
    d.status.lastAppliedTime = d.kind === 'BIOSSettings' ? now : d.status.lastAppliedTime;
}

/** Pending: refuse what cannot be written, settle what is already there, else start. */
export function settingsPending(d: Draft, obs: FirmwareObservation): Decision | 'start' {
  const obj = d.obj as SettingsObject;
  const attrs = obs.attributes;
  if (!attrs) return d.act([], d.ctx.pollMs);
  if (obj.spec.variables?.length) {
    const text =
      'Pending: spec.variables ($(key) substitution) is not supported by this controller yet; write the values out';
    d.settle('Failed', text)
      .cond(C.Failed, 'True', 'Unsupported', text)
      .event('Warning', 'Unsupported', text);
    return d.act([]);
  }
  const names = attributeNames(obj);
  const refused = [
    ...names.filter((n) => attrs.unknown.includes(n)).map((n) => `${n} (not exposed by this BMC)`),
    ...names
      .filter((n) => attrs.readOnly.includes(n))
      .map((n) => `${n} (read-only in the attribute registry)`),
  ];
  if (refused.length > 0) {
    const text = `Pending: refused before any change: ${refused.join(', ')}`;
    d.settle('Failed', text)
      .cond(C.Failed, 'True', 'AttributeRefused', text)
      .event('Warning', 'AttributeRefused', text);
    return d.act([]);
  }
  const todo = orderedFlow(obj).filter((i) => Object.keys(differing(i, attrs)).length > 0);
  if (todo.length === 0) {
    d.settle('Applied', 'every attribute already has its value');
    d.cond(C.SettingsApplied, 'True', 'AlreadyApplied', `${names.length} attribute(s) already set`);
    return d.act([]);
  }
  return 'start';
}

export function settingsPhase(d: Draft, world: FirmwareWorld, obs: FirmwareObservation): Decision {
  const obj = d.obj as SettingsObject;
  const attrs = obs.attributes;
  if (!attrs) return d.act([], poll(d, d.phase ?? 'Staging'));
  const item = orderedFlow(obj).find((i) => !itemApplied(d, i));
  if (!item) {
    d.settle('Applied', 'every settingsFlow item applied and read back');
    d.cond(C.SettingsApplied, 'True', 'Applied', `${orderedFlow(obj).length} item(s) applied and verified`);
    d.event('Normal', 'SettingsApplied', 'settings applied and verified; releasing the maintenance');
    // Settled first, released next (decide: settled objects release what is left).
    return d.act([], 0);
  }
  const diff = differing(item, attrs);
  if (Object.keys(diff).length === 0) {
    record(d, item, 'Applied', attrs);
    d.enter('Staging', `item ${item.name} verified`);
    return d.act([], 0);
  }
  const reset = { kind: 'reset' as const, target: TARGET[d.kind] };
  if (d.phase === 'Rebooting') {
    const wrong = Object.keys(diff).map((k) => `${k}=${show(attrs.current[k])} (want ${show(diff[k])})`);
    d.enter('Rebooting', `item ${item.name}: not yet ${wrong.join(', ')}`);
    return d.act([], poll(d, 'Rebooting'));
  }
  const toWrite = Object.fromEntries(Object.entries(diff).filter(([k, v]) => String(attrs.pending[k]) !== v));
  record(d, item, 'InProgress');
  const written = Object.keys(toWrite);
  d.enter(
    'Rebooting',
    `item ${item.name}: ${written.length > 0 ? `wrote ${written.join(', ')}` : 'already pending'}, resetting`,
  );
  d.event(
    'Normal',
    'SettingsStaged',
    `item ${item.name}: ${Object.keys(diff).join(', ')}; resetting to apply`,
  );
  const actions =
    written.length > 0
      ? [{ kind: 'writeAttributes' as const, target: TARGET[d.kind], attributes: toWrite }, reset]
      : [reset];
  return d.act(actions, poll(d, 'Rebooting'));
}

/** The attributes this object staged that no reset applied: pending with its value, current not. */
export function stagedOf(obj: SettingsObject, attrs: AttributeView): string[] {
  const wanted = new Map<string, string>();
  for (const item of orderedFlow(obj))
    for (const [k, v] of Object.entries(item.settings ?? {})) wanted.set(k, v);
  return [...wanted]
    .filter(
      ([k, v]) => k in attrs.pending && String(attrs.pending[k]) === v && String(attrs.current[k]) !== v,
    )
    .map(([k]) => k);
}

/**
 * A Failed settings object still holding its maintenances: what it staged and no reset applied is
 * discarded first, so no reset after the release (outside any maintenance) applies half a flow.
 * Undefined: nothing to discard, or it cannot be (the release goes ahead; an Event says what may
 * remain). A discard the BMC refused is not tried again (the StagedDiscarded condition says so).
 */
export function discardBeforeRelease(
  d: Draft,
  world: FirmwareWorld,
  release: FirmwareAction[],
): Decision | undefined {
  if (d.kind.endsWith('Version') || release.length === 0 || !world.access.ok) return undefined;
  if (d.status.conditions?.some((c) => c.type === C.StagedDiscarded)) return undefined;
  const obj = d.obj as SettingsObject;
  if (!world.bmc)
    return { kind: 'observe', request: { target: TARGET[d.kind], attributes: attributeNames(obj) } };
  if (!world.bmc.ok || !world.bmc.observation.attributes) {
    const why = world.bmc.ok ? 'no attributes read' : world.bmc.error.message;
    const text = `could not read what is staged (${why}); values staged for ${attributeNames(obj).join(', ')}, if any, may apply at the next reset`;
    d.cond(C.StagedDiscarded, 'Unknown', 'BMCUnreadable', text).event('Warning', 'StagedUnknown', text);
    return undefined;
  }
  const staged = stagedOf(obj, world.bmc.observation.attributes);
  if (staged.length === 0) return undefined;
  const text = `discarded staged ${staged.join(', ')} before releasing the maintenance`;
  d.cond(C.StagedDiscarded, 'True', 'Discarded', text).event('Normal', 'StagedDiscarded', text);
  return d.act([{ kind: 'discardStaged', target: TARGET[d.kind], attributes: staged }, ...release], 0);
}

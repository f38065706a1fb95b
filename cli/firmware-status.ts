// `kubectl metal status`, firmware part: BIOS/BMC version and settings objects (what they target,
// their state, the phase or why they failed) and the *Set kinds' counters. Pure: objects in, rows out.
import type { KubeObject } from '../api/schema/meta.js';
import { age } from './output.js';

export type FirmwareKindName = 'BIOSVersion' | 'BIOSSettings' | 'BMCVersion' | 'BMCSettings';

export interface FirmwareItem extends KubeObject {
  spec: { version?: string; serverRef?: { name?: string }; bmcRef?: { name?: string } };
  status?: {
    state?: string;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

export type FirmwareSetItem = KubeObject & { status?: Record<string, unknown> };

export interface FirmwareObjects {
  items: { kind: FirmwareKindName; obj: FirmwareItem }[];
  sets: { kind: `${FirmwareKindName}Set`; obj: FirmwareSetItem }[];
}

export const FIRMWARE_HEAD = ['KIND', 'NAME', 'TARGET', 'VERSION', 'STATE', 'PHASE / REASON', 'AGE'];
export const FIRMWARE_SET_HEAD = [
  'KIND',
  'NAME',
  'SELECTED',
  'CREATED',
  'PENDING',
  'IN PROGRESS',
  'DONE',
  'FAILED',
];

const ORDER = ['Failed', 'InProgress', 'Pending', 'Completed', 'Applied'];

/** The phase of an InProgress object, or why it failed. */
export function firmwareDetail(o: FirmwareItem): string {
  const cond = (t: string) => o.status?.conditions?.find((c) => c.type === t);
  if (o.status?.state === 'Failed') return cond('Failed')?.reason ?? 'Failed';
  const p = cond('Progressing');
  return p?.status === 'True' ? p.reason : '-';
}

export function firmwareRows(o: FirmwareObjects, now = Date.now()): string[][] {
  const rank = (s: string | undefined) => {
    const i = ORDER.indexOf(s ?? 'Pending');
    return i < 0 ? ORDER.length : i;
  };
  return [...o.items]
    .sort(
      (a, b) =>
        rank(a.obj.status?.state) - rank(b.obj.status?.state) ||
        a.kind.localeCompare(b.kind) ||
        (a.obj.metadata.name ?? '').localeCompare(b.obj.metadata.name ?? ''),
    )
    .map(({ kind, obj }) => [
      kind,
      obj.metadata.name ?? '',
      obj.spec.serverRef?.name ? `server/${obj.spec.serverRef.name}` : `bmc/${obj.spec.bmcRef?.name ?? ''}`,
      obj.spec.version ?? '-',
      obj.status?.state ?? 'Pending',
      firmwareDetail(obj),
      age(obj.metadata.creationTimestamp, now),
    ]);
}

export function firmwareSetRows(o: FirmwareObjects): string[][] {
  return o.sets.map(({ kind, obj }) => {
    const child = kind.replace(/Set$/, '');
    const n = (prefix: string) => {
      const v = obj.status?.[`${prefix}${child}`];
      return typeof v === 'number' ? String(v) : '0';
    };
    const selected = obj.status?.fullyLabeledServers ?? obj.status?.fullyLabeledBMCs;
    return [
      kind,
      obj.metadata.name ?? '',
      typeof selected === 'number' ? String(selected) : '0',
      n('available'),
      n('pending'),
      n('inProgress'),
      n('completed'),
      n('failed'),
    ];
  });
}

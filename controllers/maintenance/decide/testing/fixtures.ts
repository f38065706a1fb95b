// Builders of the maintenance controller's inputs for its decision tests: servers, maintenances and
// the world around them at a fixed clock.
import type { Server } from '../../../../api/metal/v1alpha1/server.js';
import type { ServerMaintenance } from '../../../../api/maintenance/v1alpha1/servermaintenance.js';
import { DEFAULT_POLICY, type Policy } from '../../../../policies/schema.js';
import { MAINTENANCE_FINALIZER, MAINTENANCE_TAINT_KEY } from '../../../../contract/names.js';
import { canonicalJSON } from '../../../shared/canonical.js';
import { type ServerInput } from '../model.js';

export const T0 = Date.parse('2026-09-01T10:00:00Z');
export const at = (s: number) => new Date(T0 + s * 1000);
export const iso = (s: number) => at(s).toISOString().replace('.000Z', 'Z');

export const policy: Policy = {
  ...DEFAULT_POLICY,
  timeouts: { approval: '1h', park: '60s', inMaintenance: '10m', bootPhase: '30s' },
};

export function server(
  name = 's1',
  patch: Partial<Server['spec']> = {},
  annotations?: Record<string, string>,
  status: Server['status'] = { state: 'Available' },
): Server {
  return {
    metadata: { name, uid: `uid-${name}`, resourceVersion: '10', ...(annotations ? { annotations } : {}) },
    spec: { systemUUID: name, ...patch },
    status,
  };
}

/** A value as the API server returns it: keys sorted at every level (custom resources are Go maps). */
export const sortedKeys = <T>(v: T): T => JSON.parse(canonicalJSON(v)) as T;

let seq = 0;
export function maint(
  name: string,
  patch: {
    spec?: Partial<ServerMaintenance['spec']>;
    status?: ServerMaintenance['status'];
    meta?: Partial<ServerMaintenance['metadata']>;
  } = {},
): ServerMaintenance {
  seq++;
  return {
    metadata: {
      name,
      namespace: 'ops',
      uid: `uid-${name}`,
      resourceVersion: String(100 + seq),
      generation: 1,
      creationTimestamp: iso(-600 + seq),
      finalizers: [MAINTENANCE_FINALIZER],
      ...patch.meta,
    },
    spec: { serverRef: { name: 's1' }, ...patch.spec },
    ...(patch.status ? { status: patch.status } : {}),
  };
}

export const approved = (source: 'NotRequired' | 'Owner' = 'NotRequired') => ({
  state: 'Approved' as const,
  approval: { source, approvedAt: iso(-60) },
});
export const running = (startedAgo = 30, extra: Partial<NonNullable<ServerMaintenance['status']>> = {}) => ({
  state: 'InMaintenance' as const,
  startedAt: iso(-startedAgo),
  approval: { source: 'NotRequired' as const, approvedAt: iso(-startedAgo - 1) },
  ...extra,
});

export function input(over: Partial<ServerInput> = {}): ServerInput {
  return {
    serverName: 's1',
    server: server(),
    serverGone: false,
    maintenances: [],
    grants: new Map(),
    boots: new Map(),
    policy,
    now: at(0),
    options: { parkMode: 'annotation', taintKey: MAINTENANCE_TAINT_KEY },
    backoff: new Map(),
    ...over,
  };
}

export const cond = (status: ServerMaintenance['status'] | undefined, type: string) =>
  status?.conditions?.find((c) => c.type === type);

// Who may request maintenance of which server (requesters.ts), as a table: each row is a requester, a
// maintenance and the server it names, and the verdict with the words a denial must contain.
import { describe, expect, it } from '@jest/globals';
import type { ServerMaintenance } from '../api/maintenance/v1alpha1/servermaintenance.js';
import type { Server } from '../api/metal/v1alpha1/server.js';
import { DEFAULT_POLICY, type Policy } from '../policies/schema.js';
import { isOperator, requestVerdict, type Requester } from './requesters.js';

const OPERATOR: Requester = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
const TENANT_A: Requester = {
  username: 'system:serviceaccount:tenant-a:deployer',
  groups: ['system:authenticated'],
};
const TENANT_B: Requester = {
  username: 'system:serviceaccount:tenant-b:deployer',
  groups: ['system:authenticated'],
};

const claimedByA: Server = {
  metadata: { name: 's1' },
  spec: { systemUUID: 's1', serverClaimRef: { namespace: 'tenant-a', name: 'c1' } },
};
const unclaimed: Server = { metadata: { name: 's2' }, spec: { systemUUID: 's2' } };

interface Row {
  name: string;
  who: Requester;
  namespace: string;
  server: Server | undefined;
  spec?: Partial<ServerMaintenance['spec']>;
  policy?: Policy;
  /** 'Operator' | 'Owner', or the denial's field and the words its message must contain. */
  expect: 'Operator' | 'Owner' | { field: string; words: string[] };
}

const opsGroupPolicy: Policy = {
  ...DEFAULT_POLICY,
  requesters: { operators: { users: [], groups: ['system:serviceaccounts:ops'] } },
};

const ROWS: Row[] = [
  {
    name: 'an operator, another namespace than the claim',
    who: OPERATOR,
    namespace: 'ops',
    server: claimedByA,
    spec: { approval: { required: false } },
    expect: 'Operator',
  },
  {
    name: 'an operator, an unclaimed server',
    who: OPERATOR,
    namespace: 'ops',
    server: unclaimed,
    expect: 'Operator',
  },
  {
    name: 'the owner, approval required',
    who: TENANT_A,
    namespace: 'tenant-a',
    server: claimedByA,
    expect: 'Owner',
  },
  {
    name: 'the owner, Emergency with approval.required true',
    who: TENANT_A,
    namespace: 'tenant-a',
    server: claimedByA,
    spec: { class: 'Emergency', approval: { required: true } },
    expect: 'Owner',
  },
  {
    name: "another tenant, the claimed server's owner elsewhere",
    who: TENANT_B,
    namespace: 'tenant-b',
    server: claimedByA,
    expect: {
      field: 'spec.serverRef',
      words: ['system:serviceaccount:tenant-b:deployer', 'server s1', 'tenant-a/c1', 'namespace tenant-b'],
    },
  },
  {
    name: 'another tenant, Emergency without approval',
    who: TENANT_B,
    namespace: 'tenant-b',
    server: claimedByA,
    spec: { class: 'Emergency', approval: { required: false } },
    expect: { field: 'spec.serverRef', words: ['tenant-a/c1'] },
  },
  {
    name: 'the owner skipping its approval with required false',
    who: TENANT_A,
    namespace: 'tenant-a',
    server: claimedByA,
    spec: { approval: { required: false } },
    expect: {
      field: 'spec.approval.required',
      words: ['skip the approval of tenant-a/c1', 'spec.approval.required is false'],
    },
  },
  {
    name: 'the owner skipping its approval by class Emergency',
    who: TENANT_A,
    namespace: 'tenant-a',
    server: claimedByA,
    spec: { class: 'Emergency' },
    expect: {
      field: 'spec.approval.required',
      words: ['class Emergency needs no approval', 'set spec.approval.required: true'],
    },
  },
  {
    name: 'a tenant, an unclaimed server',
    who: TENANT_A,
    namespace: 'tenant-a',
    server: unclaimed,
    expect: { field: 'spec.serverRef', words: ['server s2', 'is not claimed', 'requesters.operators'] },
  },
  {
    name: 'a tenant, a server not known',
    who: TENANT_A,
    namespace: 'tenant-a',
    server: undefined,
    expect: { field: 'spec.serverRef', words: ['is not known'] },
  },
  {
    name: 'system:masters when the policy names another group',
    who: OPERATOR,
    namespace: 'ops',
    server: claimedByA,
    policy: opsGroupPolicy,
    expect: { field: 'spec.serverRef', words: ['"admin"', 'tenant-a/c1'] },
  },
  {
    name: 'a ServiceAccount of the operators group the policy names',
    who: {
      username: 'system:serviceaccount:ops:robot',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ops'],
    },
    namespace: 'ops',
    server: claimedByA,
    policy: opsGroupPolicy,
    spec: { class: 'Emergency' },
    expect: 'Operator',
  },
];

function maintenance(
  namespace: string,
  server: string,
  spec: Partial<ServerMaintenance['spec']> = {},
): ServerMaintenance {
  return { metadata: { namespace, name: 'm' }, spec: { serverRef: { name: server }, ...spec } };
}

describe('requestVerdict', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const m = maintenance(row.namespace, row.server?.metadata.name ?? 'ghost', row.spec);
    const verdict = requestVerdict(row.who, m, row.server, row.policy ?? DEFAULT_POLICY);
    if (typeof row.expect === 'string') {
      expect(verdict).toEqual({ ok: true, as: row.expect });
      return;
    }
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.field).toBe(row.expect.field);
    for (const w of row.expect.words) expect(verdict.message).toContain(w);
  });

  it('matches operators by exact username as well as by group', () => {
    const policy: Policy = { ...DEFAULT_POLICY, requesters: { operators: { users: ['alice'], groups: [] } } };
    expect(isOperator({ username: 'alice' }, policy)).toBe(true);
    expect(isOperator({ username: 'alice2', groups: ['alice'] }, policy)).toBe(false);
  });
});

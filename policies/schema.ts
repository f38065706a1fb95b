// The maintenance policy: one TypeBox source for the document's TypeScript type, its ajv validator
// and its documentation. The webhook and the controllers read it from a ConfigMap
// (policies/default-policy.yaml) and hot-reload it; lib/policy parses and holds it.
//
// A ConfigMap may carry a partial document: it is merged onto DEFAULT_POLICY (objects merge, lists
// replace) and the merged result must match this schema, so every field of a loaded Policy is set.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { MaintenanceClasses } from '../api/maintenance/v1alpha1/servermaintenance.js';

export const POLICY_API_VERSION = 'policy.maintenance.metal.ironcore.dev/v1alpha1';
export const POLICY_KIND = 'MaintenancePolicy';

/** Where the policy ConfigMap lives and which data key holds the YAML document. */
export const POLICY_CONFIGMAP = {
  namespace: 'metal-maintenance-system',
  name: 'metal-maintenance-policy',
  key: 'policy.yaml',
} as const;

export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';
export const CLOCK_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** `examples` is standard JSON Schema; the validator quotes it to say what would be valid. */
const Duration = (description: string) =>
  Type.String({ pattern: DURATION_PATTERN, description, examples: ['90s', '15m', '168h', '1h30m'] });

const Enum = <const T extends readonly string[]>(values: T, description: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });

const Closed = <T extends Record<string, TSchema>>(properties: T, description: string) =>
  Type.Object(properties, { additionalProperties: false, description });

export const ClassPolicy = Closed(
  {
    approvalRequired: Type.Boolean({
      description:
        'Whether the claim owner must approve when ServerMaintenance.spec.approval.required is unset.',
    }),
    deadline: Duration(
      'Time after the announcement when approval is no longer needed (spec.approval.deadline wins).',
    ),
    minNotice: Duration(
      'Shortest notice a tenant gets: a spec deadline earlier than announcedAt + minNotice is moved to that time.',
    ),
    requireWindow: Type.Boolean({
      description:
        'Whether this class may only start inside a maintenance window (ignored when no window is defined).',
    }),
  },
  'Defaults for one maintenance class.',
);
export type ClassPolicy = Static<typeof ClassPolicy>;

export const AutoApprovalConditions = ['NoConsumer', 'Unanswered'] as const;
export type AutoApprovalCondition = (typeof AutoApprovalConditions)[number];

export const AutoApprovalRule = Closed(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 63,
      description: 'Name shown in the approval source and in events.',
    }),
    when: Enum(
      AutoApprovalConditions,
      'NoConsumer: the claim has no consumer (no ownerReference, none of consumerLabels, no write by ' +
        'one of consumerFieldManagers). ' +
        'Unanswered: the owner neither approved nor deferred.',
    ),
    after: Duration('How long after the announcement the rule applies.'),
    classes: Type.Array(Enum(MaintenanceClasses, 'A maintenance class.'), {
      uniqueItems: true,
      description: 'Classes the rule applies to.',
    }),
    namespaces: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        uniqueItems: true,
        description: 'Claim namespaces the rule applies to; unset: every namespace.',
      }),
    ),
  },
  'Approves on the owner’s behalf when the condition holds long enough.',
);
export type AutoApprovalRule = Static<typeof AutoApprovalRule>;

export const MaintenanceWindow = Closed(
  {
    name: Type.String({ minLength: 1, maxLength: 63 }),
    days: Type.Array(Enum(WEEKDAYS, 'A weekday.'), {
      minItems: 1,
      uniqueItems: true,
      description: 'Days on which the window opens (in timeZone).',
    }),
    start: Type.String({
      pattern: CLOCK_PATTERN,
      description: 'Opening wall-clock time, HH:MM.',
      examples: ['22:00'],
    }),
    end: Type.String({
      pattern: CLOCK_PATTERN,
      description: 'Closing wall-clock time, HH:MM; at or before start means the next day.',
      examples: ['04:00'],
    }),
    timeZone: Type.String({
      minLength: 1,
      description: 'IANA time zone the times are in.',
      examples: ['UTC', 'Europe/Berlin'],
    }),
  },
  'A weekly window in which window-bound maintenance classes may start.',
);
export type MaintenanceWindow = Static<typeof MaintenanceWindow>;

export const LegacyLabelModes = ['translate', 'warn', 'deny'] as const;
export type LegacyLabelMode = (typeof LegacyLabelModes)[number];

const Usernames = (description: string) =>
  Type.Array(Type.String({ minLength: 1 }), { minItems: 1, uniqueItems: true, description });

export const DrainTimeoutActions = ['Fail', 'Proceed'] as const;
export type DrainTimeoutAction = (typeof DrainTimeoutActions)[number];

export const McmMachines = Closed(
  {
    namespace: Type.String({
      minLength: 1,
      maxLength: 63,
      description:
        "The namespace of the cluster's Gardener MCM Machines (the shoot's namespace in the seed).",
    }),
    inPlaceUpdate: Type.Optional(
      Type.Boolean({
        description:
          "The worker pools update in place (GEP-31, orchestrationType Manual): instead of evicting, select the Node for update and let the shoot's MCM drain it.",
      }),
    ),
    credentials: Type.Optional(
      Closed(
        {
          secretName: Type.String({ minLength: 1, maxLength: 253 }),
          secretKey: Type.String({ minLength: 1, maxLength: 253 }),
        },
        "Secret in the claims' namespace with a kubeconfig of the cluster holding the Machines (the seed); unset: the workload cluster's own.",
      ),
    ),
  },
  "Gardener: the claims' Nodes are found through MCM Machines (spec.providerID, status.node) and take part in GEP-31's in-place update labels.",
);
export type McmMachines = Static<typeof McmMachines>;

export const WorkloadCluster = Closed(
  {
    namespace: Type.String({
      minLength: 1,
      maxLength: 63,
      description: 'Claims in this namespace are consumed by Nodes of this cluster.',
    }),
    secretName: Type.String({
      minLength: 1,
      maxLength: 253,
      description: 'Secret in that namespace holding a kubeconfig of the workload cluster.',
    }),
    secretKey: Type.String({ minLength: 1, maxLength: 253, description: 'Data key of the kubeconfig.' }),
    mcm: Type.Optional(McmMachines),
  },
  'Where the drain controller finds the credentials of one workload cluster (never logged).',
);
export type WorkloadCluster = Static<typeof WorkloadCluster>;

export const DrainPolicy = Closed(
  {
    leadTime: Duration("Cordon and drain this long before an announced maintenance's notBefore."),
    timeout: Duration('drainTimeout: how long a drain may take from its start before onTimeout applies.'),
    onTimeout: Enum(
      DrainTimeoutActions,
      'At drainTimeout with pods left: Fail (condition Drained=False, no approval; the deadline still applies) or Proceed (approve anyway).',
    ),
    emptyDirData: Enum(
      ['Delete', 'Block'] as const,
      'Pods with emptyDir volumes: evict them, losing that data (kubectl drain --delete-emptydir-data), or name them as blockers.',
    ),
    unmanagedPods: Enum(
      ['Evict', 'Block'] as const,
      'Pods no controller recreates: evict them (kubectl drain --force), or name them as blockers.',
    ),
    clusters: Type.Array(WorkloadCluster, {
      maxItems: 256,
      description:
        "Workload clusters by claim namespace. Claims of CAPI Machines use their Cluster's <name>-kubeconfig Secret instead.",
    }),
  },
  'The drain controller: cordon and drain the Node consuming a claim before its maintenance, then approve.',
);
export type DrainPolicy = Static<typeof DrainPolicy>;

/** Usernames or groups, possibly none. */
const Identities = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { uniqueItems: true, maxItems: 64, description });

export const PolicySchema = Closed(
  {
    apiVersion: Type.Unsafe<typeof POLICY_API_VERSION>({ type: 'string', enum: [POLICY_API_VERSION] }),
    kind: Type.Unsafe<typeof POLICY_KIND>({ type: 'string', enum: [POLICY_KIND] }),
    approval: Closed(
      {
        defaultMode: Enum(
          ['Manual', 'Automatic'] as const,
          'Standing approval mode of claims that set none.',
        ),
      },
      'Approval defaults.',
    ),
    classes: Closed(
      {
        Planned: ClassPolicy,
        Urgent: ClassPolicy,
        Emergency: ClassPolicy,
      },
      'Per-class approval, deadline and window defaults.',
    ),
    autoApproval: Closed(
      {
        consumerLabels: Type.Array(Type.String({ minLength: 1 }), {
          uniqueItems: true,
          description: 'Claim labels or annotations that mark a consumer (besides ownerReferences).',
        }),
        consumerFieldManagers: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
          uniqueItems: true,
          description:
            'Field managers (metadata.managedFields[].manager) whose writes to a claim mark a consumer: ' +
            'consumers that own claims without an ownerReference, such as Gardener machine-controller-manager.',
        }),
        rules: Type.Array(AutoApprovalRule, { maxItems: 32 }),
      },
      'Approval on behalf of claims nobody answers for.',
    ),
    windows: Type.Array(MaintenanceWindow, {
      maxItems: 64,
      description: 'Maintenance windows; empty: always open.',
    }),
    grants: Closed(
      {
        ttl: Duration('How long a budget grant lives if its maintenance never reaches InMaintenance.'),
        ledgerCap: Type.Integer({
          minimum: 1,
          maximum: 2000,
          description:
            'Ledger entries per budget beyond which no new grant is written (the CRD allows 2000).',
        }),
      },
      'Budget grant ledger.',
    ),
    legacyLabels: Closed(
      {
        mode: Enum(
          LegacyLabelModes,
          'What the maintenance-approved label on a ServerClaim does: translate into a typed approval, warn, or deny.',
        ),
      },
      'Handling of the metal.ironcore.dev/maintenance-* labels.',
    ),
    timeouts: Closed(
      {
        approval: Duration('A maintenance waiting for approval longer than this fails.'),
        park: Duration('Powering off and parking a server longer than this fails the maintenance.'),
        inMaintenance: Duration('Default maximum time in InMaintenance (spec.maxDuration wins).'),
        bootPhase: Duration('Default timeout of each ServerBoot phase (spec.phaseTimeout wins).'),
      },
      'Every phase has a timeout and a visible terminal failure.',
    ),
    requesters: Closed(
      {
        operators: Closed(
          {
            users: Identities(
              'Usernames (e.g. system:serviceaccount:<namespace>:<name>) that are operators.',
            ),
            groups: Identities(
              'Groups whose members are operators (e.g. system:serviceaccounts:<namespace> for every ServiceAccount of a namespace).',
            ),
          },
          'Identities that may request maintenance of any server, claimed by anybody or by nobody, and skip the owner’s approval (spec.approval.required false, or a class that needs none).',
        ),
      },
      'Who may request maintenance of which server. Anybody else may request it only of a server claimed in the maintenance’s own namespace, with the owner’s approval required.',
    ),
    drain: DrainPolicy,
    firmware: Closed(
      {
        class: Enum(
          MaintenanceClasses,
          'Class of the ServerMaintenances the firmware controller requests (the kinds have no field for it).',
        ),
        defaultMaxAttempts: Type.Integer({
          minimum: 0,
          maximum: 10,
          description:
            'Automatic retries of a failed firmware object when its retryPolicy.maxAttempts is unset.',
        }),
        retryBackoff: Duration('Wait before the first automatic retry; doubles per failed attempt.'),
        retryBackoffMax: Duration('Longest wait between automatic retries.'),
        boot: Type.Optional(
          Closed(
            {
              image: Type.String({
                minLength: 1,
                description: 'Image the maintenance boots (spec.boot.image).',
              }),
              method: Enum(['VirtualMedia', 'UefiHttp', 'Pxe'] as const, 'How it boots (spec.boot.method).'),
            },
            'Pinned during firmware maintenances, so a BMC-initiated reboot comes back into this image, not the production disk; unset: the maintenances boot nothing.',
          ),
        ),
        timeouts: Closed(
          {
            admission: Duration(
              'A BMC-scoped object whose servers are not all InMaintenance this long after the first is releases them all and retries.',
            ),
            issue: Duration('From InMaintenance until the BMC accepted the update or the settings write.'),
            task: Duration('A firmware update task that has not reached a terminal state by then fails.'),
            reboot: Duration('From a reset until the BMC (or host) answers again with the result visible.'),
            verify: Duration('Reading back the version or the attributes after the update.'),
          },
          'Timeout of each firmware phase; a phase that overruns fails the object visibly.',
        ),
      },
      'The firmware controller (BIOS/BMC versions and settings).',
    ),
    writers: Closed(
      {
        maintenanceStatus: Usernames('Users (service accounts) that may write ServerMaintenance status.'),
        drainStatus: Usernames(
          'Users (service accounts) that may write ServerMaintenance status.drain and the condition Drained, and nothing else of its status.',
        ),
        announcements: Usernames('Users (service accounts) that may write ServerClaim status.maintenance.'),
      },
      "Controller identities; anybody else is denied these writes. The webhook configuration admits the default controllers' own writes without a call, so removing one of them here does not revoke it (take the write away in its RBAC).",
    ),
  },
  'Maintenance policy, read from a ConfigMap.',
);
export type Policy = Static<typeof PolicySchema>;

const SA = (name: string) => `system:serviceaccount:${POLICY_CONFIGMAP.namespace}:${name}`;

/** The field manager Gardener's machine-controller-manager provider for IronCore metal applies claims with. */
export const MCM_FIELD_MANAGER = 'mcm.ironcore.dev/field-owner';

/**
 * The built-in policy; policies/default-policy.yaml spells out the same values (a test keeps them equal).
 * Grant TTL is 2m, like the PodDisruptionBudget ledger's DeletionTimeout: the grant is written in the same
 * admission call as the InMaintenance transition, so the only gap it must cover is the write landing in
 * etcd plus informer lag (sub-second to seconds); two minutes covers a slow control plane by two orders of
 * magnitude while bounding how long a leaked reservation (the write failed after the grant) blocks a budget.
 */
export const DEFAULT_POLICY: Policy = {
  apiVersion: POLICY_API_VERSION,
  kind: POLICY_KIND,
  approval: { defaultMode: 'Manual' },
  classes: {
    Planned: { approvalRequired: true, deadline: '168h', minNotice: '24h', requireWindow: true },
    Urgent: { approvalRequired: true, deadline: '24h', minNotice: '1h', requireWindow: false },
    Emergency: { approvalRequired: false, deadline: '1h', minNotice: '0s', requireWindow: false },
  },
  autoApproval: {
    consumerLabels: [],
    // Gardener's machine-controller-manager (provider ironcore-metal) creates claims without an
    // ownerReference and applies them under this field manager: without it, its claims would count as
    // consumer-less and be approved without anyone asking the shoot.
    consumerFieldManagers: [MCM_FIELD_MANAGER],
    rules: [
      { name: 'no-consumer', when: 'NoConsumer', after: '1h', classes: ['Planned', 'Urgent', 'Emergency'] },
    ],
  },
  windows: [],
  grants: { ttl: '2m', ledgerCap: 2000 },
  legacyLabels: { mode: 'translate' },
  timeouts: { approval: '336h', park: '15m', inMaintenance: '24h', bootPhase: '10m' },
  // The system's own namespace: its controllers (a firmware rollout, say) request maintenances too.
  requesters: {
    operators: {
      users: [],
      groups: ['system:masters', `system:serviceaccounts:${POLICY_CONFIGMAP.namespace}`],
    },
  },
  // kubectl drain's defaults: pods with emptyDir data and pods without a controller block the drain.
  drain: {
    leadTime: '0s',
    timeout: '30m',
    onTimeout: 'Fail',
    emptyDirData: 'Block',
    unmanagedPods: 'Block',
    clusters: [],
  },
  firmware: {
    class: 'Planned',
    defaultMaxAttempts: 3,
    retryBackoff: '1m',
    retryBackoffMax: '30m',
    timeouts: { admission: '30m', issue: '5m', task: '60m', reboot: '15m', verify: '5m' },
  },
  writers: {
    maintenanceStatus: [SA('maintenance-controller'), SA('approval-controller')],
    drainStatus: [SA('drain-controller')],
    announcements: [SA('approval-controller')],
  },
};

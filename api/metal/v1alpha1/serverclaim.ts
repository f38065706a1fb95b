// ServerClaim (metal.ironcore.dev/v1alpha1): a tenant's reservation of one server.
// Upstream fields are mirrored; spec.maintenance (written by the claim owner) and
// status.maintenance (written by the approval controller) are the typed announce/approve contract.
import { Type, type Static } from '@sinclair/typebox';
import {
  defineKind,
  StringEnum,
  KnownString,
  Int32,
  Time,
  MapList,
  LocalObjectReference,
  LabelSelector,
  Toleration,
  Power,
  type ObjectOf,
} from '../../schema/index.js';
import { METAL_GROUP, METAL_VERSION } from './group.js';

export const ApprovalModes = ['Manual', 'Automatic'] as const;
export type ApprovalMode = (typeof ApprovalModes)[number];

export const MaintenanceApproval = Type.Object({
  maintenanceUID: Type.String({
    minLength: 1,
    description: 'uid of the announced ServerMaintenance this approves.',
  }),
  maintenanceName: Type.Optional(
    Type.String({ description: 'Name of that maintenance, for people; the uid decides.' }),
  ),
  approvedBy: Type.Optional(
    Type.String({
      description: 'Stamped by the admission webhook from the request user; client values are overwritten.',
    }),
  ),
  approvedAt: Type.Optional(Time({ description: 'Stamped by the admission webhook.' })),
});
export type MaintenanceApproval = Static<typeof MaintenanceApproval>;

export const MaintenanceDeferral = Type.Object({
  maintenanceUID: Type.String({ minLength: 1 }),
  until: Time({ description: 'Do not start before this time. Must not be after the announced deadline.' }),
  reason: Type.Optional(Type.String({ maxLength: 1024 })),
  requestedBy: Type.Optional(Type.String({ description: 'Stamped by the admission webhook.' })),
  requestedAt: Type.Optional(Time({ description: 'Stamped by the admission webhook.' })),
});
export type MaintenanceDeferral = Static<typeof MaintenanceDeferral>;

export const ClaimMaintenanceSpec = Type.Object(
  {
    approvalMode: Type.Optional(
      StringEnum(ApprovalModes, {
        default: 'Manual',
        description:
          'Standing approval: Automatic approves every announced maintenance as soon as its notBefore passes.',
      }),
    ),
    approvals: Type.Optional(
      MapList(MaintenanceApproval, ['maintenanceUID'], {
        maxItems: 64,
        description: 'Explicit approvals, each scoped to one maintenance uid.',
      }),
    ),
    deferrals: Type.Optional(
      MapList(MaintenanceDeferral, ['maintenanceUID'], {
        maxItems: 64,
        description: 'Requests to start later, within the deadline.',
      }),
    ),
  },
  { description: 'What the claim owner says about maintenance of the bound server.' },
);
export type ClaimMaintenanceSpec = Static<typeof ClaimMaintenanceSpec>;

export const AnnouncementStates = ['Announced', 'Deferred', 'Approved', 'InMaintenance'] as const;
export type AnnouncementState = (typeof AnnouncementStates)[number];

export const ApprovalSources = ['Owner', 'Standing', 'Deadline', 'Policy', 'NotRequired'] as const;
export type ApprovalSource = (typeof ApprovalSources)[number];

export const Announcement = Type.Object({
  maintenanceUID: Type.String(),
  maintenanceName: Type.String(),
  maintenanceNamespace: Type.String(),
  reason: Type.String(),
  class: Type.String(),
  priority: Type.Optional(Int32()),
  description: Type.Optional(Type.String()),
  announcedAt: Time(),
  notBefore: Type.Optional(Time()),
  deadline: Type.Optional(
    Time({ description: 'After this time the maintenance proceeds without approval.' }),
  ),
  state: StringEnum(AnnouncementStates),
  approvalSource: Type.Optional(StringEnum(ApprovalSources)),
  approvedBy: Type.Optional(Type.String()),
  approvedAt: Type.Optional(Time()),
  deferredUntil: Type.Optional(Time()),
});
export type Announcement = Static<typeof Announcement>;

export const ClaimMaintenanceStatus = Type.Object(
  {
    announcements: Type.Optional(MapList(Announcement, ['maintenanceUID'], { maxItems: 64 })),
  },
  { description: 'Maintenance announced to this claim. Written only by the approval controller.' },
);
export type ClaimMaintenanceStatus = Static<typeof ClaimMaintenanceStatus>;

export const ServerClaimSpec = Type.Object(
  {
    power: Power,
    serverRef: Type.Optional(
      LocalObjectReference({ rules: [{ rule: 'self == oldSelf', message: 'serverRef is immutable' }] }),
    ),
    serverSelector: Type.Optional(
      LabelSelector({ rules: [{ rule: 'self == oldSelf', message: 'serverSelector is immutable' }] }),
    ),
    ignitionSecretRef: Type.Optional(LocalObjectReference()),
    userDataRef: Type.Optional(LocalObjectReference()),
    // An OCI reference is at most about 520 characters (distribution/reference: name 255, tag 128,
    // digest); 1024 leaves room and makes a megabyte value our refusal, not etcd's.
    image: Type.String({ maxLength: 1024 }),
    tolerations: Type.Optional(Type.Array(Toleration)),
    maintenance: Type.Optional(ClaimMaintenanceSpec),
  },
  {
    'x-kubernetes-validations': [
      { rule: '!has(oldSelf.serverRef) || has(self.serverRef)', message: 'serverRef is required once set' },
      {
        rule: '!has(oldSelf.serverSelector) || has(self.serverSelector)',
        message: 'serverSelector is required once set',
      },
    ],
  },
);

export const ServerClaimStatus = Type.Object({
  phase: Type.Optional(KnownString(['Bound', 'Unbound'] as const)),
  maintenance: Type.Optional(ClaimMaintenanceStatus),
});

export const ServerClaimKind = defineKind({
  group: METAL_GROUP,
  version: METAL_VERSION,
  kind: 'ServerClaim',
  plural: 'serverclaims',
  shortNames: ['scl'],
  categories: ['metal'],
  scope: 'Namespaced',
  description: "ServerClaim is a tenant's reservation of one server.",
  body: { spec: ServerClaimSpec, status: Type.Optional(ServerClaimStatus) },
  printerColumns: [
    { name: 'Server', type: 'string', jsonPath: '.spec.serverRef.name' },
    { name: 'Image', type: 'string', jsonPath: '.spec.image', priority: 100 },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Approval', type: 'string', jsonPath: '.spec.maintenance.approvalMode' },
    { name: 'Announced', type: 'string', jsonPath: '.status.maintenance.announcements[*].maintenanceName' },
  ],
});

export type ServerClaim = ObjectOf<typeof ServerClaimKind>;
export type ServerClaimSpec = Static<typeof ServerClaimSpec>;

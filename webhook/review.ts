// From an AdmissionRequest to a Decision: pick the rule for the path, check the object against its
// kind's schema, run the rule (pure), and for the eviction rule execute the grant plan. Exceptions in
// a rule become a METAL_ERR_INTERNAL denial: the webhook fails closed, and never crashes on input.
import { ALL_KINDS } from '../api/registry.js';
import type { KindDefinition } from '../api/schema/kind.js';
import {
  formatFieldErrors,
  validateObject,
  type FieldsRead,
  type ValidateOptions,
} from '../api/schema/validate.js';
import type { PolicyStore } from '../lib/policy/store.js';
import { DEFAULT_POLICY } from '../policies/schema.js';
import { errorMessage } from '../lib/errors.js';
import type { AdmissionRequest } from './admission.js';
import { Codes } from '../contract/codes.js';
import { allow, deny, withWarnings, type Decision } from '../contract/denial.js';
import type { PolicyConfigMapRef, Rule, RuleInput } from './rules/common.js';
import { contract } from './rules/contract.js';
import { decideEviction, type EvictionOutcome } from './rules/eviction.js';
import { legacyLabels } from './rules/legacy-labels.js';
import { mutate } from './rules/mutate.js';
import { placement } from './rules/placement.js';
import { policyConfigMap } from './rules/policy-configmap.js';
import type { WorldView } from './world.js';
import { type BudgetRef } from '../contract/budgets.js';
import { type GrantFunction, type GrantResult } from './grants/plan.js';
import { grantDecision } from './grants/reserve.js';

export type ReviewType = 'validate' | 'mutate';

/** Synchronous rules by path; `eviction` is asynchronous (it takes budget room) and handled apart. */
export const RULES: Record<ReviewType, Record<string, Rule | 'eviction'>> = {
  validate: {
    placement,
    eviction: 'eviction',
    contract,
    policy: policyConfigMap,
    'legacy-labels': legacyLabels,
  },
  mutate: { contract: mutate },
};

export interface ReviewDeps {
  world: WorldView;
  policies: PolicyStore;
  grant: GrantFunction;
  clock: () => Date;
  policyConfigMap?: PolicyConfigMapRef;
}

export interface ReviewOutcome {
  decision: Decision;
  /** Set when the eviction rule ran a grant. */
  grant?: GrantResult;
  /** Audit annotations (the API server prefixes them with the webhook name). */
  audit?: Record<string, string>;
}

const refName = (r: BudgetRef) =>
  r.namespace ? `${r.kind}/${r.namespace}/${r.name}` : `${r.kind}/${r.name}`;

/** What the audit log should keep about an admitted disruption: who approved, which budgets hold it. */
function evictionAudit(source: string, grant: GrantResult): Record<string, string> {
  // A dry run holds nothing: its audit record must not name grants.
  if (!grant.granted || grant.dryRun) return { 'approval-source': source };
  return {
    'approval-source': source,
    grants: [...grant.written, ...grant.alreadyHeld].map(refName).join(',') || 'none',
  };
}

// By resource, not by request.kind: the rules dispatch on the resource, so that is what must be checked.
function kindOfResource(request: AdmissionRequest): KindDefinition | undefined {
  return ALL_KINDS.find((k) => k.group === request.resource.group && k.plural === request.resource.resource);
}

/**
 * The fields the rules read from a request's object, by kind, where that is not all of it. Only these
 * are checked: under `failurePolicy: Fail`, a change upstream in the shape of a field no rule reads must
 * not refuse every write of the kind. A Server is metal-operator's: its status is mostly inventory
 * (interfaces, processors, storage), and of its spec placement reads the binding, the cordon, the
 * taints and the legacy maintenance reference. rules/placement.test.ts checks that placement reads no
 * other field.
 */
export const FIELDS_READ: Readonly<Record<string, FieldsRead>> = {
  Server: {
    spec: ['serverClaimRef', 'unclaimable', 'taints', 'serverMaintenanceRef'],
    status: ['state', 'maintenance'],
  },
};

// The check's options per kind, built once: the check runs on every review.
const SHAPE_ONLY: ValidateOptions = { values: false };
const CHECK_OPTIONS = new Map<string, ValidateOptions>(
  Object.entries(FIELDS_READ).map(([kind, fields]) => [kind, { values: false, fields }]),
);

function checkOne(
  request: AdmissionRequest,
  value: unknown,
  where: 'object' | 'oldObject',
): Decision | undefined {
  const kind = request.kind.kind;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return deny(Codes.OBJECT_INVALID, `request.${where} must be a ${kind} object for ${request.operation}`, {
      causes: [{ field: where, message: 'is missing' }],
    });
  }
  const meta = (value as { metadata?: unknown }).metadata;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    return deny(Codes.OBJECT_INVALID, `${kind}: metadata must be an object`, {
      causes: [{ field: `${where === 'object' ? '' : 'oldObject.'}metadata`, message: 'must be an object' }],
    });
  }
  const def = kindOfResource(request);
  // A delete is judged on the stored object's shape only: a malformed object must stay deletable.
  if (!def || request.operation === 'DELETE') return undefined;
  // Shape only: the API server checks values (patterns, formats, bounds) against the CRD it serves before
  // a validating webhook runs and after a mutating one; for metal-operator's kinds that CRD is upstream's,
  // not our model of it. Rules need types to read the object safely, and value checks (patterns above
  // all) were four fifths of this check's cost.
  const result = validateObject(def, value, CHECK_OPTIONS.get(def.kind) ?? SHAPE_ONLY);
  if (result.ok) return undefined;
  const prefix = where === 'object' ? '' : 'oldObject.';
  return deny(
    Codes.OBJECT_INVALID,
    `${where === 'object' ? '' : 'stored '}${kind} is malformed: ${formatFieldErrors(result.errors)}`,
    {
      causes: result.errors.map((e) => ({
        field: `${prefix}${e.field}`,
        message: e.message,
        reason: 'FieldValueInvalid',
      })),
    },
  );
}

/**
 * Checks the request's objects against the shape of their kind's schema (types, required fields, enums),
 * so rules read well-typed data. A malformed object gets a denial naming the fields.
 */
export function checkObject(request: AdmissionRequest): Decision | undefined {
  const op = request.operation;
  if (op === 'CREATE' || op === 'UPDATE') {
    const invalid = checkOne(request, request.object, 'object');
    if (invalid) return invalid;
  }
  if ((op === 'UPDATE' || op === 'DELETE') && request.oldObject !== undefined && request.oldObject !== null) {
    return checkOne(request, request.oldObject, 'oldObject');
  }
  return undefined;
}

export async function review(
  type: ReviewType,
  rule: string,
  request: AdmissionRequest,
  deps: ReviewDeps,
): Promise<ReviewOutcome> {
  return decide(type, rule, request, deps);
}

/**
 * review(), answered synchronously unless the eviction rule has a grant to execute: the server needs no
 * promise (nor the microtasks behind one) for the decisions that are pure.
 */
export function decide(
  type: ReviewType,
  rule: string,
  request: AdmissionRequest,
  deps: ReviewDeps,
): ReviewOutcome | Promise<ReviewOutcome> {
  // Own keys only: a rule named "constructor" or "__proto__" is not a rule.
  const handler = Object.hasOwn(RULES[type], rule) ? RULES[type][rule] : undefined;
  if (!handler)
    return { decision: allow([`no ${type} rule ${JSON.stringify(rule)}; request admitted unchecked`]) };
  // The policy ConfigMap rule does not read the policy: it must work before the first one exists,
  // or the first policy could never be created.
  const policy = deps.policies.current() ?? (handler === policyConfigMap ? DEFAULT_POLICY : undefined);
  if (!policy)
    return { decision: deny(Codes.NO_POLICY, 'no maintenance policy loaded yet', { retryAfterSeconds: 5 }) };
  const invalid = checkObject(request);
  if (invalid) return { decision: invalid };
  const input: RuleInput = { request, world: deps.world, policy, now: deps.clock() };
  if (deps.policyConfigMap) input.policyConfigMap = deps.policyConfigMap;
  try {
    if (handler !== 'eviction') return { decision: handler(input) };
    const outcome = decideEviction(input);
    if (outcome.kind === 'decision') return { decision: outcome.decision };
    const dryRun = request.dryRun === true;
    const onCopies = dryRun ? deps.grant.dryRunOnCopies?.(outcome.plan) : undefined;
    if (onCopies) return granted(outcome, dryRun, onCopies);
    return deps
      .grant(outcome.plan, { dryRun })
      .then((grant) => granted(outcome, dryRun, grant))
      .catch((e: unknown) => failed(rule, e));
  } catch (e) {
    return failed(rule, e);
  }
}

// The helpers below live at module level: closures inside decide() would be created on every review.

function failed(rule: string, e: unknown): ReviewOutcome {
  return { decision: deny(Codes.INTERNAL, `rule ${rule} failed: ${errorMessage(e)}`) };
}

/** The outcome of an eviction whose grant ran (or was checked, for a dry run). */
function granted(
  outcome: Extract<EvictionOutcome, { kind: 'grant' }>,
  dryRun: boolean,
  grant: GrantResult,
): ReviewOutcome {
  const decision = grantDecision(grant, outcome.warnings);
  return {
    decision: dryRun ? withWarnings(decision, DRY_RUN_WARNING) : decision,
    grant,
    audit: evictionAudit(outcome.source, grant),
  };
}

const DRY_RUN_WARNING = ['dry run: budget room checked, nothing reserved'];

// From an AdmissionRequest to a Decision: pick the rule for the path, check the object against its
// kind's schema, run the rule (pure), and for the eviction rule execute the grant plan. Exceptions in
// a rule become a METAL_ERR_INTERNAL denial: the webhook fails closed, and never crashes on input.
import { kindFor } from '../api/registry.js';
import { formatFieldErrors, validateObject } from '../api/schema/validate.js';
import type { PolicyStore } from '../lib/policy/store.js';
import { errorMessage } from '../lib/errors.js';
import type { AdmissionRequest } from './admission.js';
import { Codes } from './codes.js';
import { allow, deny, withWarnings, type Decision } from './decision.js';
import { grantDecision, type GrantFunction, type GrantResult } from './grants.js';
import type { PolicyConfigMapRef, Rule, RuleInput } from './rules/common.js';
import { contract } from './rules/contract.js';
import { decideEviction } from './rules/eviction.js';
import { legacyLabels } from './rules/legacy-labels.js';
import { mutate } from './rules/mutate.js';
import { placement } from './rules/placement.js';
import { policyConfigMap } from './rules/policy-configmap.js';
import type { WorldView } from './world.js';

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

export function hasRule(type: ReviewType, rule: string): boolean {
  return Object.hasOwn(RULES[type], rule);
}

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
}

/** Validates the request's object against its kind's schema; a denial naming the fields when it fails. */
export function checkObject(request: AdmissionRequest): Decision | undefined {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return undefined;
  const def = kindFor(
    request.kind.group ? `${request.kind.group}/${request.kind.version}` : request.kind.version,
    request.kind.kind,
  );
  const object = request.object;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) {
    return deny(
      Codes.OBJECT_INVALID,
      `request.object must be a ${request.kind.kind} object for ${request.operation}`,
      { causes: [{ field: 'object', message: 'is missing' }] },
    );
  }
  const meta = (object as { metadata?: unknown }).metadata;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    return deny(Codes.OBJECT_INVALID, `${request.kind.kind}: metadata must be an object`, {
      causes: [{ field: 'metadata', message: 'must be an object' }],
    });
  }
  if (!def) return undefined;
  const result = validateObject(def, object);
  if (result.ok) return undefined;
  return deny(
    Codes.OBJECT_INVALID,
    `${request.kind.kind} is malformed: ${formatFieldErrors(result.errors)}`,
    {
      causes: result.errors.map((e) => ({ field: e.field, message: e.message, reason: 'FieldValueInvalid' })),
    },
  );
}

export async function review(
  type: ReviewType,
  rule: string,
  request: AdmissionRequest,
  deps: ReviewDeps,
): Promise<ReviewOutcome> {
  const handler = RULES[type][rule];
  if (!handler)
    return { decision: allow([`no ${type} rule ${JSON.stringify(rule)}; request admitted unchecked`]) };
  const policy = deps.policies.current();
  if (!policy)
    return { decision: deny(Codes.NO_POLICY, 'no maintenance policy loaded yet', { retryAfterSeconds: 5 }) };
  const invalid = checkObject(request);
  if (invalid) return { decision: invalid };
  const input: RuleInput = {
    request,
    world: deps.world,
    policy,
    now: deps.clock(),
    ...(deps.policyConfigMap ? { policyConfigMap: deps.policyConfigMap } : {}),
  };
  try {
    if (handler !== 'eviction') return { decision: handler(input) };
    const outcome = decideEviction(input);
    if (outcome.kind === 'decision') return { decision: outcome.decision };
    const dryRun = request.dryRun === true;
    const grant = await deps.grant(outcome.plan, { dryRun });
    const decision = grantDecision(grant, outcome.warnings);
    return {
      decision: dryRun
        ? withWarnings(decision, ['dry run: budget room checked, nothing reserved'])
        : decision,
      grant,
    };
  } catch (e) {
    return { decision: deny(Codes.INTERNAL, `rule ${rule} failed: ${errorMessage(e)}`) };
  }
}

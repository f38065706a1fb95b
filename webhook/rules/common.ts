// What every rule receives, and small readers shared by the rules.
import type { Policy } from '../../policies/schema.js';
import type { AdmissionRequest, UserInfo } from '../admission.js';
import type { Decision } from '../../contract/denial.js';
import type { WorldView } from '../world.js';

export interface PolicyConfigMapRef {
  namespace: string;
  name: string;
  key: string;
}

export interface RuleInput {
  request: AdmissionRequest;
  world: WorldView;
  policy: Policy;
  now: Date;
  /** Identity of the policy ConfigMap (default: POLICY_CONFIGMAP). */
  policyConfigMap?: PolicyConfigMapRef;
}

export type Rule = (input: RuleInput) => Decision;

export function isResource(
  request: AdmissionRequest,
  group: string,
  resource: string,
  subResource?: string,
): boolean {
  return (
    request.resource.group === group &&
    request.resource.resource === resource &&
    (request.subResource ?? '') === (subResource ?? '')
  );
}

/** The request's objects, typed by the caller (the server validated them against their kind first). */
export function objects<T>(request: AdmissionRequest): { object: T | undefined; oldObject: T | undefined } {
  return { object: asObject<T>(request.object), oldObject: asObject<T>(request.oldObject) };
}

// Module level: a closure inside objects() would be created on every call (several per review).
function asObject<T>(v: unknown): T | undefined {
  return typeof v === 'object' && v !== null ? (v as T) : undefined;
}

export function userName(user: UserInfo): string {
  return user.username ?? '';
}

/** Whether the request comes from one of the listed identities (exact usernames). */
export function isOneOf(user: UserInfo, usernames: readonly string[]): boolean {
  return user.username !== undefined && usernames.includes(user.username);
}

/** Deep equality for JSON values (object key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

// The policy ConfigMap is validated at admission: an invalid one is refused with errors that name the
// field, so it never reaches the webhook's and controllers' PolicyStores. Other ConfigMaps pass.
import { POLICY_CONFIGMAP } from '../../policies/schema.js';
import { parsePolicyConfigMap } from '../../lib/policy/parse.js';
import { Codes } from '../../contract/codes.js';
import { allow, deny, type Decision } from '../../contract/denial.js';
import { objects, type PolicyConfigMapRef, type RuleInput } from './common.js';

/** Whether the request is about the policy ConfigMap (by name and namespace). */
function isPolicyConfigMap(request: RuleInput['request'], ref: PolicyConfigMapRef): boolean {
  if (request.resource.group !== '' || request.resource.resource !== 'configmaps' || request.subResource)
    return false;
  const { object, oldObject } = objects<{ metadata?: { name?: string; namespace?: string } }>(request);
  const meta = object?.metadata ?? oldObject?.metadata;
  const name = request.name || meta?.name;
  const namespace = request.namespace || meta?.namespace;
  return name === ref.name && namespace === ref.namespace;
}

export function policyConfigMap({ request, policyConfigMap: ref = POLICY_CONFIGMAP }: RuleInput): Decision {
  if (!isPolicyConfigMap(request, ref)) return allow();
  if (request.operation === 'DELETE') {
    return allow([
      `deleting ${ref.namespace}/${ref.name}: the webhook and controllers keep the last good policy until a new one arrives`,
    ]);
  }
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  const parsed = parsePolicyConfigMap(request.object, { key: ref.key });
  if (parsed.ok) return allow();
  const prefix = (field: string) =>
    field.startsWith('data[') ? field : `data[${JSON.stringify(ref.key)}].${field}`;
  return deny(
    Codes.POLICY_INVALID,
    `invalid maintenance policy: ${parsed.errors.map((e) => `${prefix(e.field)}: ${e.message}`).join('; ')}`,
    {
      causes: parsed.errors.map((e) => ({
        field: prefix(e.field),
        message: e.message,
        reason: 'FieldValueInvalid',
      })),
    },
  );
}

// The policy ConfigMap is validated at admission: an invalid one is refused with errors that name the
// field, so it never reaches the webhook's and controllers' PolicyStores. Other ConfigMaps pass.
import { POLICY_CONFIGMAP } from '../../policies/schema.js';
import { parsePolicyConfigMap } from '../../lib/policy/parse.js';
import { Codes } from '../codes.js';
import { allow, deny, type Decision } from '../decision.js';
import { objects, type RuleInput } from './common.js';

export function policyConfigMap({ request, policyConfigMap: ref = POLICY_CONFIGMAP }: RuleInput): Decision {
  if (request.resource.group !== '' || request.resource.resource !== 'configmaps' || request.subResource)
    return allow();
  const { object, oldObject } = objects<{ metadata?: { name?: string; namespace?: string } }>(request);
  const name = request.name || object?.metadata?.name || oldObject?.metadata?.name;
  const namespace = request.namespace || object?.metadata?.namespace;
  if (name !== ref.name || namespace !== ref.namespace) return allow();
  if (request.operation === 'DELETE') {
    return allow([
      `deleting ${ref.namespace}/${ref.name}: the webhook and controllers keep the last good policy until a new one arrives`,
    ]);
  }
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  const parsed = parsePolicyConfigMap(object, { key: ref.key });
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

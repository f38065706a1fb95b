// Kubernetes and IronCore types shared by several kinds.
import { Type, type Static } from '@sinclair/typebox';
import {
  StringEnum,
  Int64,
  Time,
  MapList,
  StringMap,
  immutable,
  type FieldOptions,
  k8sOptions,
} from './types.js';
import {
  check,
  labelMap,
  labelValue,
  qualifiedName,
  quoted,
  LABEL_VALUE_MAX,
  QUALIFIED_NAME_MAX,
} from './checks.js';

export const ConditionStatus = StringEnum(['True', 'False', 'Unknown'] as const);

/** metav1.Condition. */
export const Condition = Type.Object({
  type: Type.String({
    maxLength: 316,
    pattern:
      '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
  }),
  status: ConditionStatus,
  observedGeneration: Type.Optional(Int64({ minimum: 0 })),
  lastTransitionTime: Time(),
  reason: Type.String({ maxLength: 1024, minLength: 1, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
  message: Type.String({ maxLength: 32768 }),
});
export type Condition = Static<typeof Condition>;

export const Conditions = (description = 'Observations of the object, one per condition type.') =>
  MapList(Condition, ['type'], { description, maxItems: 32 });

/** corev1.LocalObjectReference as IronCore uses it. */
export const LocalObjectReference = (options: FieldOptions = {}) =>
  Type.Object(
    { name: Type.String({ description: 'Name of the referent.' }) },
    { ...k8sOptions(options), 'x-kubernetes-map-type': 'atomic' },
  );
export type LocalObjectReference = { name: string };

/** IronCore ObjectReference {namespace, name}. */
export const ObjectReference = (options: FieldOptions = {}) =>
  Type.Object(
    {
      namespace: Type.String({ description: 'Namespace of the referent.' }),
      name: Type.String({ description: 'Name of the referent.' }),
    },
    { ...k8sOptions(options), 'x-kubernetes-map-type': 'atomic' },
  );
export type ObjectReference = { namespace: string; name: string };

/**
 * IronCore ImmutableObjectReference: each field may be set or cleared as a whole but, once set,
 * not re-pointed (upstream enforces `self == oldSelf` per field).
 */
export const ImmutableObjectReference = (options: FieldOptions = {}) =>
  Type.Object(
    {
      namespace: Type.String({ 'x-kubernetes-validations': [immutable('namespace is immutable')] }),
      name: Type.String({ 'x-kubernetes-validations': [immutable('name is immutable')] }),
    },
    { ...k8sOptions(options), 'x-kubernetes-map-type': 'atomic' },
  );

/** An ObjectReference that also pins the referent's uid, so a recreated object does not match. */
export const UIDReference = (options: FieldOptions = {}) =>
  Type.Object(
    {
      namespace: Type.Optional(Type.String()),
      name: Type.String(),
      uid: Type.String(),
    },
    { ...k8sOptions(options), 'x-kubernetes-map-type': 'atomic' },
  );
export type UIDReference = { namespace?: string; name: string; uid: string };

const SET_OPERATORS = ['In', 'NotIn'];
const EXISTS_OPERATORS = ['Exists', 'DoesNotExist'];
const operatorOf = (self: unknown) =>
  typeof self === 'object' && self !== null ? (self as { operator?: unknown }).operator : undefined;
const valueCount = (self: unknown) => {
  const values =
    typeof self === 'object' && self !== null ? (self as { values?: unknown }).values : undefined;
  return Array.isArray(values) ? values.length : 0;
};

/** metav1.LabelSelectorRequirement, checked as apimachinery's ValidateLabelSelectorRequirement does. */
const LabelSelectorRequirement = Type.Object(
  {
    key: Type.String({ maxLength: QUALIFIED_NAME_MAX, ...k8sOptions({ rules: [qualifiedName()] }) }),
    operator: StringEnum(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const),
    values: Type.Optional(
      Type.Array(Type.String({ maxLength: LABEL_VALUE_MAX, ...k8sOptions({ rules: [labelValue()] }) }), {
        'x-kubernetes-list-type': 'atomic',
        maxItems: 256,
      }),
    ),
  },
  k8sOptions({
    rules: [
      check({
        rule: "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
        holds: (self) => !SET_OPERATORS.includes(String(operatorOf(self))) || valueCount(self) > 0,
        message: 'must be specified when operator is {value}',
        shown: quoted('self.operator', operatorOf),
        fieldPath: '.values',
        reason: 'FieldValueRequired',
      }),
      check({
        rule: "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
        holds: (self) => !EXISTS_OPERATORS.includes(String(operatorOf(self))) || valueCount(self) === 0,
        message: 'may not be specified when operator is {value}',
        shown: quoted('self.operator', operatorOf),
        fieldPath: '.values',
      }),
    ],
  }),
);

/** metav1.LabelSelector; keys, values and operators are checked as the API server checks its own. */
export const LabelSelector = (options: FieldOptions = {}) =>
  Type.Object(
    {
      matchLabels: Type.Optional(
        StringMap({ maxProperties: 64, valueMaxLength: LABEL_VALUE_MAX, rules: labelMap() }),
      ),
      matchExpressions: Type.Optional(
        Type.Array(LabelSelectorRequirement, { 'x-kubernetes-list-type': 'atomic', maxItems: 64 }),
      ),
    },
    { ...k8sOptions(options), 'x-kubernetes-map-type': 'atomic' },
  );
export type LabelSelector = {
  matchLabels?: Record<string, string>;
  matchExpressions?: {
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }[];
};

export const Power = StringEnum(['On', 'Off'] as const);
export type Power = 'On' | 'Off';

export const IndicatorLED = StringEnum(['Unknown', 'Lit', 'Blinking', 'Off'] as const);

/** Upstream Server taints (#878): NoBind blocks new bindings; Evict is reserved upstream. */
export const TaintEffect = StringEnum(['NoBind', 'Evict'] as const);
export type TaintEffect = 'NoBind' | 'Evict';

export const Taint = Type.Object({
  key: Type.String({
    minLength: 1,
    description: 'The taint key; automation uses its own key so it never removes an admin taint.',
  }),
  value: Type.Optional(Type.String()),
  // Defaulted (as upstream's +kubebuilder:default) because it is a list-map key of Server spec.taints.
  effect: Type.Optional(StringEnum(['NoBind', 'Evict'] as const, { default: 'NoBind' })),
});
export type Taint = Static<typeof Taint>;

export const Toleration = Type.Object({
  key: Type.String({ minLength: 1 }),
  operator: Type.Optional(StringEnum(['Equal', 'Exists'] as const)),
  value: Type.Optional(Type.String()),
  effect: Type.Optional(TaintEffect),
});
export type Toleration = Static<typeof Toleration>;

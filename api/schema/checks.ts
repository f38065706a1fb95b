// Value checks both validators apply, with one message. Each is a CEL rule in the CRD, which the API
// server evaluates with or without our webhook, plus its JavaScript twin, which validateObject runs
// (schema/validate.ts). The twin sits under a symbol key, so it never reaches the CRD. The message is
// written once, with `{value}` where the value given goes; CEL and JavaScript spell that value the
// same way, and api/testdata/invalid holds both to the same text.
import type { CelRule } from './types.js';

export const TWIN: unique symbol = Symbol('metal.rule-twin');

export interface RuleTwin {
  /** The rule's judgement of `self`; true for a value of the wrong type (the type check reports that). */
  holds(self: unknown): boolean;
  /** The refusal, as the API server renders the rule's messageExpression. */
  message(self: unknown): string;
}

export type TwinnedRule = CelRule & { [TWIN]: RuleTwin };

export function twinOf(rule: unknown): RuleTwin | undefined {
  return typeof rule === 'object' && rule !== null ? (rule as Partial<TwinnedRule>)[TWIN] : undefined;
}

/** How a message shows the value: a CEL expression yielding a string, and the same in JavaScript. */
export interface Shown {
  cel: string;
  js: (self: unknown) => string;
}

/** Values longer than this are cut in messages (a refusal of a 4 KiB URL need not repeat it). */
export const SHOWN_MAX = 80;

/** The string at `path` of self (default self itself), in double quotes, cut at SHOWN_MAX. */
export function quoted(path = 'self', get: (self: unknown) => unknown = (s) => s): Shown {
  const cut = `(size(${path}) > ${SHOWN_MAX} ? ${path}.substring(0, ${SHOWN_MAX}) + '...' : ${path})`;
  return { cel: `'"' + ${cut} + '"'`, js: (self) => quoteJs(get(self)) };
}

function quoteJs(v: unknown): string {
  const chars = [...String(v)];
  return `"${chars.length > SHOWN_MAX ? `${chars.slice(0, SHOWN_MAX).join('')}...` : chars.join('')}"`;
}

/** An int-or-string self: the string quoted, the integer as digits. */
export const intOrStringShown: Shown = {
  cel: `(type(self) == string ? ${quoted().cel} : string(self))`,
  js: (self) => (typeof self === 'string' ? quoteJs(self) : String(self)),
};

const celString = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export interface CheckSpec {
  /** CEL over `self` (RE2 regexes; only libraries Kubernetes 1.30 has). */
  rule: string;
  /** The same judgement in JavaScript. */
  holds: (self: unknown) => boolean;
  /** The refusal; `{value}` (at most once) is replaced by the value shown. */
  message: string;
  /** Default: self, quoted. */
  shown?: Shown;
  /** The field the API server names, relative to self (e.g. `.image`); default self. */
  fieldPath?: string;
  /**
   * Default FieldValueForbidden: rendered `Forbidden: <message>`. FieldValueInvalid would print
   * `Invalid value: "string"` (the schema type, not the value) before a message that already
   * shows the value.
   */
  reason?: CelRule['reason'];
}

/** A CEL rule with its JavaScript twin. */
export function check(spec: CheckSpec): TwinnedRule {
  const shown = spec.shown ?? quoted();
  const [before = '', after = ''] = spec.message.split('{value}');
  const hasValue = spec.message.includes('{value}');
  const parts = hasValue
    ? [before && celString(before), shown.cel, after && celString(after)].filter(Boolean)
    : [celString(spec.message)];
  return {
    rule: spec.rule,
    message: spec.message.replace('{value}', 'the value'),
    ...(hasValue ? { messageExpression: parts.join(' + ') } : {}),
    ...(spec.fieldPath ? { fieldPath: spec.fieldPath } : {}),
    reason: spec.reason ?? 'FieldValueForbidden',
    [TWIN]: {
      holds: spec.holds,
      message: (self) => (hasValue ? `${before}${shown.js(self)}${after}` : spec.message),
    },
  };
}

// --- Kubernetes names and label values (k8s.io/apimachinery/pkg/util/validation) ----------------

const DNS1123_SUBDOMAIN = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
/** A qualified name's name part: at most 63 characters, alphanumeric at both ends. */
const NAME_PART = '[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?';
const QUALIFIED_NAME_RE = `^(${DNS1123_SUBDOMAIN}/)?${NAME_PART}$`;
const PREFIX_FITS_RE = '^[^/]{1,253}/';
const LABEL_VALUE_RE = `^(${NAME_PART})?$`;

const qualifiedNameRe = new RegExp(QUALIFIED_NAME_RE);
const prefixFitsRe = new RegExp(PREFIX_FITS_RE);
const labelValueRe = new RegExp(LABEL_VALUE_RE);

/** Longest qualified name: a 253-character DNS subdomain prefix, '/', a 63-character name. */
export const QUALIFIED_NAME_MAX = 317;
export const LABEL_VALUE_MAX = 63;

/** CEL: `expr` (a string) is a qualified name, the form of label keys. */
export const celQualifiedName = (expr: string) =>
  `(${expr}.matches('${QUALIFIED_NAME_RE.replace(/\\/g, '\\\\')}') && (!${expr}.contains('/') || ${expr}.matches('${PREFIX_FITS_RE}')))`;
export const isQualifiedName = (v: string) =>
  qualifiedNameRe.test(v) && (!v.includes('/') || prefixFitsRe.test(v));

export const celLabelValue = (expr: string) => `${expr}.matches('${LABEL_VALUE_RE.replace(/\\/g, '\\\\')}')`;
export const isLabelValue = (v: string) => labelValueRe.test(v);

export const QUALIFIED_NAME_RULE =
  "a qualified name: an optional DNS subdomain prefix of at most 253 characters and '/', then at most 63 characters of letters, digits, '-', '_' and '.' that start and end with a letter or digit (e.g. 'rack' or 'topology.example.com/rack')";
export const LABEL_VALUE_RULE =
  "empty, or at most 63 characters of letters, digits, '-', '_' and '.' that start and end with a letter or digit";

/** A string that must be a qualified name (a label key, a topology key). */
export const qualifiedName = (what = 'label key'): TwinnedRule =>
  check({
    rule: celQualifiedName('self'),
    holds: (v) => typeof v !== 'string' || isQualifiedName(v),
    message: `{value} is not a valid ${what}: it must be ${QUALIFIED_NAME_RULE}`,
  });

/** A string that must be a label value. */
export const labelValue = (): TwinnedRule =>
  check({
    rule: celLabelValue('self'),
    holds: (v) => typeof v !== 'string' || isLabelValue(v),
    message: `{value} is not a valid label value: it must be ${LABEL_VALUE_RULE}`,
  });

const stringEntries = (self: unknown): [string, unknown][] =>
  typeof self === 'object' && self !== null && !Array.isArray(self) ? Object.entries(self) : [];

/** map[string]string whose keys are label keys and values label values (metav1 matchLabels, labels). */
export const labelMap = (): TwinnedRule[] => [
  check({
    rule: `self.all(k, ${celQualifiedName('k')})`,
    holds: (self) => stringEntries(self).every(([k]) => isQualifiedName(k)),
    message: `key {value} is not a valid label key: it must be ${QUALIFIED_NAME_RULE}`,
    shown: quoted(`self.filter(k, !${celQualifiedName('k')})[0]`, (self) =>
      stringEntries(self)
        .map(([k]) => k)
        .find((k) => !isQualifiedName(k)),
    ),
  }),
  check({
    rule: `self.all(k, ${celLabelValue('self[k]')})`,
    holds: (self) => stringEntries(self).every(([, v]) => typeof v !== 'string' || isLabelValue(v)),
    message: `value {value} is not a valid label value: it must be ${LABEL_VALUE_RULE}`,
    shown: quoted(`self[self.filter(k, !${celLabelValue('self[k]')})[0]]`, (self) =>
      stringEntries(self)
        .map(([, v]) => v)
        .find((v) => typeof v === 'string' && !isLabelValue(v)),
    ),
  }),
];

/** intstr.IntOrString holds an int32. */
const MAX_COUNT = 2 ** 31 - 1;
const PERCENT = /^(100|[1-9]?[0-9])%$/;

/**
 * An IntOrString that is a count from 0 to int32 max or a percentage "0%".."100%": a budget's
 * maxUnavailable, a firmware Set's maxFailures. Both round a percentage up (contract/budget-room.ts).
 */
export const countOrPercent = (): TwinnedRule =>
  check({
    rule: `type(self) == int ? self >= 0 && self <= ${MAX_COUNT} : type(self) != string || self.matches('^(100|[1-9]?[0-9])%$')`,
    holds: (v) =>
      typeof v === 'number'
        ? !Number.isInteger(v) || (v >= 0 && v <= MAX_COUNT)
        : typeof v !== 'string' || PERCENT.test(v),
    message: `{value} is neither a count from 0 to ${MAX_COUNT} nor a percentage from "0%" to "100%" (e.g. 2 or "10%")`,
    shown: intOrStringShown,
  });

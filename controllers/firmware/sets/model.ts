// The firmware *Set kinds' vocabulary: which child kind each stamps, from which template field, for
// which targets (servers or BMCs), and the names of its status counters. No I/O.
import type { Condition, LabelSelector } from '../../../api/schema/common.js';
import type { FirmwareKindName } from '../model.js';

export type SetKindName = 'BIOSVersionSet' | 'BIOSSettingsSet' | 'BMCVersionSet' | 'BMCSettingsSet';

export interface SetShape {
  child: FirmwareKindName;
  /** The spec field holding the child's template. */
  template: string;
  /** The spec field holding the selector, and what it selects. */
  selector: 'serverSelector' | 'bmcSelector';
  /** The child's spec field naming its target. */
  targetRef: 'serverRef' | 'bmcRef';
  /** Status field counting the selected targets. */
  selected: 'fullyLabeledServers' | 'fullyLabeledBMCs';
}

export const SET_SHAPES: Record<SetKindName, SetShape> = {
  BIOSVersionSet: {
    child: 'BIOSVersion',
    template: 'biosVersionTemplate',
    selector: 'serverSelector',
    targetRef: 'serverRef',
    selected: 'fullyLabeledServers',
  },
  BIOSSettingsSet: {
    child: 'BIOSSettings',
    template: 'biosSettingsTemplate',
    selector: 'serverSelector',
    targetRef: 'serverRef',
    selected: 'fullyLabeledServers',
  },
  BMCVersionSet: {
    child: 'BMCVersion',
    template: 'bmcVersionTemplate',
    selector: 'bmcSelector',
    targetRef: 'bmcRef',
    selected: 'fullyLabeledBMCs',
  },
  BMCSettingsSet: {
    child: 'BMCSettings',
    template: 'bmcSettingsTemplate',
    selector: 'bmcSelector',
    targetRef: 'bmcRef',
    selected: 'fullyLabeledBMCs',
  },
};

/**
 * On a child: why its Set holds it back (Queued, Paused, ShortCircuited). Written only by the
 * Set's reconciler; the child's decision honours it until the child is past its maintenance gate.
 */
export const HOLD_ANNOTATION = 'firmware.metal.ironcore.dev/held-by-set';
/**
 * On a child: the hash of the Set template it was stamped or last re-stamped from. Written only by
 * the Set's reconciler; a different hash means the template changed and the child is re-stamped.
 */
export const TEMPLATE_HASH_ANNOTATION = 'firmware.metal.ironcore.dev/template-hash';
export const HoldReasons = ['Queued', 'Paused', 'ShortCircuited'] as const;
export type HoldReason = (typeof HoldReasons)[number];

export const SetConditions = {
  /** True while more children failed than spec.maxFailures allows: no child starts. */
  ShortCircuited: 'ShortCircuited',
  /** True while spec.paused. */
  Paused: 'Paused',
  /** True once every child is Completed/Applied. */
  RolloutComplete: 'RolloutComplete',
} as const;

export interface SetSpecView {
  paused?: boolean;
  maxConcurrent?: number;
  maxFailures?: number | string;
  [k: string]: unknown;
}

export interface SetObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; uid?: string; generation?: number; deletionTimestamp?: string };
  spec: SetSpecView & Partial<Record<'serverSelector' | 'bmcSelector', LabelSelector>>;
  status?: SetStatus;
}

/** A child as the Set decision sees it. */
export interface ChildView {
  name: string;
  /** The server or BMC it targets. */
  target: string;
  state?: string;
  /** InProgress past its maintenance gate: it touches the BMC and finishes whatever the Set says. */
  started: boolean;
  hold?: string;
  /** Stamped from the Set's current template (its hash annotation matches). */
  current: boolean;
}

export type SetStatus = Record<string, number | Condition[] | undefined> & {
  observedGeneration?: number;
  heldChildren?: number;
  conditions?: Condition[];
};

export interface SetEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
}

export interface SetDecision {
  /** Children to create: their target and the hold they start with. */
  create: { name: string; target: string; hold?: HoldReason }[];
  /** Hold annotations to change on existing children (null removes it). */
  holds: { name: string; hold: HoldReason | null }[];
  /**
   * Children to re-stamp from the changed template, each written with its hold in one patch (a
   * re-stamped child that changes is a new attempt, paced like a first one).
   */
  restamp: { name: string; target: string; hold: HoldReason | null }[];
  status: SetStatus;
  events: SetEvent[];
}

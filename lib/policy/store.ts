// PolicyStore: holds the last good policy. Updates that fail validation are refused and reported, and
// never replace what is held; listeners hear about every accepted change. Pure apart from calling the
// listeners: the informer (or a file watcher) that feeds it lives at the edge.
import type { Policy } from '../../policies/schema.js';
import { parsePolicyConfigMap, type ParseOptions, type PolicyFieldError } from './parse.js';

export interface PolicyRejection {
  errors: PolicyFieldError[];
  /** Where the refused document came from, e.g. `metal-maintenance-system/metal-maintenance-policy@123`. */
  source: string;
  at: Date;
}

export type PolicyUpdateResult =
  | { ok: true; changed: boolean }
  | {
      ok: false;
      errors: PolicyFieldError[];
      /** Whether an older good policy is still in force. */ kept: boolean;
    };

export type PolicyListener = (policy: Policy, previous: Policy | undefined) => void;
export type RejectionListener = (rejection: PolicyRejection) => void;

export interface PolicyStoreOptions extends ParseOptions {
  /** The policy in force before any ConfigMap arrives (usually DEFAULT_POLICY); none: not loaded yet. */
  initial?: Policy;
  clock?: () => Date;
}

export class PolicyStore {
  #policy: Policy | undefined;
  #hash: string | undefined;
  #rejection: PolicyRejection | undefined;
  #listeners = new Set<PolicyListener>();
  #rejectionListeners = new Set<RejectionListener>();
  readonly #options: PolicyStoreOptions;
  readonly #clock: () => Date;

  constructor(options: PolicyStoreOptions = {}) {
    this.#options = options;
    this.#policy = options.initial;
    this.#clock = options.clock ?? (() => new Date());
  }

  /** The policy in force, or undefined before the first good one. */
  current(): Policy | undefined {
    return this.#policy;
  }

  isLoaded(): boolean {
    return this.#policy !== undefined;
  }

  /** The last refused update, cleared by the next accepted one. */
  lastRejection(): PolicyRejection | undefined {
    return this.#rejection;
  }

  /** Offers a ConfigMap (from an informer add/update event). */
  update(configMap: unknown, source = describeSource(configMap)): PolicyUpdateResult {
    const parsed = parsePolicyConfigMap(configMap, this.#options);
    if (!parsed.ok) {
      const rejection = { errors: parsed.errors, source, at: this.#clock() };
      this.#rejection = rejection;
      for (const l of this.#rejectionListeners) safely(() => l(rejection));
      return { ok: false, errors: parsed.errors, kept: this.#policy !== undefined };
    }
    this.#rejection = undefined;
    if (parsed.hash === this.#hash) return { ok: true, changed: false };
    return { ok: true, changed: this.#set(parsed.policy, parsed.hash) };
  }

  /** Sets a policy directly (tests, or a built-in default); it must already be valid. */
  set(policy: Policy): void {
    this.#set(policy, undefined);
  }

  /** Subscribes to accepted changes; returns the unsubscribe function. */
  onChange(listener: PolicyListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Subscribes to refused updates (to log them, count them, or raise an Event). */
  onRejected(listener: RejectionListener): () => void {
    this.#rejectionListeners.add(listener);
    return () => this.#rejectionListeners.delete(listener);
  }

  #set(policy: Policy, hash: string | undefined): boolean {
    const previous = this.#policy;
    this.#policy = policy;
    this.#hash = hash;
    for (const l of this.#listeners) safely(() => l(policy, previous));
    return true;
  }
}

// One failing listener must not stop the others nor the store from holding the new policy.
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    /* listeners report their own failures */
  }
}

function describeSource(cm: unknown): string {
  const meta = (cm as { metadata?: { namespace?: string; name?: string; resourceVersion?: string } } | null)
    ?.metadata;
  if (!meta) return 'configmap';
  return `${meta.namespace ?? ''}/${meta.name ?? ''}${meta.resourceVersion ? `@${meta.resourceVersion}` : ''}`;
}

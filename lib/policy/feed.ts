// Feeds the policy ConfigMap from an informer into a PolicyStore, for the webhook and every controller:
//
//   const policies = new PolicyStore();
//   watchPolicy(mgr, policies);          // informer on the one ConfigMap + readiness check
//
// Adds and updates go through PolicyStore.update, so an invalid document is refused and never replaces
// the last good one. A deleted ConfigMap changes nothing (the last good policy stays). A ConfigMap that
// does not exist when the informer first syncs means the built-in defaults (the same document as
// policies/default-policy.yaml), unless `whenMissing: 'none'`: otherwise a fresh cluster whose policy is
// not applied yet would keep every guarded write failing closed, including the ones that install it.
import type { Logger } from 'pino';
import { DEFAULT_POLICY, POLICY_CONFIGMAP } from '../../policies/schema.js';
import type { InformerHandlers, InformerOptions } from '../kube/informer.js';
import { Core } from '../kube/resources.js';
import type { HealthCheck } from '../kube/ops-server.js';
import type { Manager } from '../kube/manager.js';
import type { KubeObject } from '../../api/schema/meta.js';
import { silentLogger } from '../log.js';
import type { PolicyStore } from './store.js';

export type ConfigMapObject = KubeObject & { data?: Record<string, string> };

/** The informer surface the feed needs (lib/kube's Informer has it). */
export interface PolicySource {
  on(handlers: InformerHandlers<ConfigMapObject>): void;
  waitForSync(timeoutMs?: number): Promise<void>;
  getByName(name: string, namespace?: string): ConfigMapObject | undefined;
}

export interface PolicyRef {
  namespace: string;
  name: string;
  key: string;
}

export interface PolicyFeedOptions {
  ref?: Partial<PolicyRef>;
  /** In force while the ConfigMap has never existed: the built-in defaults, or nothing (not ready). */
  whenMissing?: 'defaults' | 'none';
  logger?: Logger;
  syncTimeoutMs?: number;
}

export interface PolicyFeed {
  ref: PolicyRef;
  /** Resolves once the informer has synced and the missing-ConfigMap rule was applied. */
  synced: Promise<void>;
  /** Readiness: passes while a policy is in force. */
  readiness: HealthCheck;
}

export function policyRef(ref: Partial<PolicyRef> = {}): PolicyRef {
  return {
    namespace: ref.namespace ?? POLICY_CONFIGMAP.namespace,
    name: ref.name ?? POLICY_CONFIGMAP.name,
    key: ref.key ?? POLICY_CONFIGMAP.key,
  };
}

/** Informer options that watch exactly the policy ConfigMap (RBAC may then name just that object). */
export function policyInformerOptions(ref: PolicyRef): InformerOptions<ConfigMapObject> {
  return { namespace: ref.namespace, fieldSelector: `metadata.name=${ref.name}` };
}

export function feedPolicy(
  source: PolicySource,
  store: PolicyStore,
  options: PolicyFeedOptions = {},
): PolicyFeed {
  const ref = policyRef(options.ref);
  const log = (options.logger ?? silentLogger).child({ policy: `${ref.namespace}/${ref.name}` });
  const ours = (cm: ConfigMapObject) =>
    cm.metadata.name === ref.name && (cm.metadata.namespace ?? ref.namespace) === ref.namespace;
  const offer = (cm: ConfigMapObject) => {
    if (!ours(cm)) return;
    const result = store.update(cm);
    const resourceVersion = cm.metadata.resourceVersion;
    if (result.ok) {
      if (result.changed) log.info({ resourceVersion }, 'maintenance policy loaded');
      return;
    }
    // Field names only: the messages quote the refused values.
    log.warn(
      { resourceVersion, fields: result.errors.map((e) => e.field), kept: result.kept },
      result.kept
        ? 'maintenance policy refused; the last good one stays in force'
        : 'maintenance policy refused; no policy is in force',
    );
  };
  source.on({
    add: offer,
    update: (_old, cm) => offer(cm),
    delete: (cm) => {
      if (ours(cm)) log.warn('maintenance policy ConfigMap deleted; the last good policy stays in force');
    },
  });
  const synced = source.waitForSync(options.syncTimeoutMs).then(() => {
    if (store.isLoaded() || source.getByName(ref.name, ref.namespace)) return;
    if ((options.whenMissing ?? 'defaults') === 'defaults') {
      store.set(DEFAULT_POLICY);
      log.info('maintenance policy ConfigMap not found; the built-in defaults are in force');
    } else {
      log.warn('maintenance policy ConfigMap not found; no policy is in force');
    }
  });
  return {
    ref,
    synced,
    readiness: {
      name: 'policy-loaded',
      check: () => store.isLoaded() || 'no valid maintenance policy loaded',
    },
  };
}

/**
 * The usual wiring in a binary: an informer on the policy ConfigMap from the Manager, fed into
 * `store`, and a readiness check so the process is not ready before a policy is in force.
 */
export function watchPolicy(
  mgr: Pick<Manager, 'informer' | 'addReadinessCheck' | 'logger'>,
  store: PolicyStore,
  options: Omit<PolicyFeedOptions, 'logger'> = {},
): PolicyFeed {
  const ref = policyRef(options.ref);
  const informer = mgr.informer<ConfigMapObject>(Core.ConfigMap, policyInformerOptions(ref));
  const feed = feedPolicy(informer, store, { ...options, ref, logger: mgr.logger });
  mgr.addReadinessCheck(feed.readiness);
  return feed;
}

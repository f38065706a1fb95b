// The policy each lifecycle controller decides by: its --policy-configmap flag and the store the
// ConfigMap's watch keeps current (hot reload; an invalid document never replaces the last good one).
import type { Command } from 'commander';
import type { CommonFlags } from '../../lib/kube/binary.js';
import type { Manager } from '../../lib/kube/manager.js';
import { watchPolicy } from '../../lib/policy/feed.js';
import { PolicyStore } from '../../lib/policy/store.js';
import { POLICY_CONFIGMAP } from '../../policies/schema.js';

export function policyConfigMapFlag(cmd: Command): Command {
  return cmd.option(
    '--policy-configmap <name>',
    'name of the policy ConfigMap in --namespace',
    POLICY_CONFIGMAP.name,
  );
}

/** A policy store fed from the ConfigMap named by the flags, watched by the manager's informers. */
export function watchedPolicies(mgr: Manager, flags: CommonFlags): PolicyStore {
  const policies = new PolicyStore();
  watchPolicy(mgr, policies, {
    ref: { namespace: flags.namespace, name: flags.policyConfigmap as string },
  });
  return policies;
}

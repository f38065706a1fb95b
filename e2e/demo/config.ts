// What the demo runs with: its options, the policy it applies, and what it returns.
import { TENANT_LABEL } from '../sim/fleet/fleet.js';

export interface DemoOptions {
  kubeconfig: string;
  servers: number;
  racks: number;
  tenants: number;
  webhookReplicas: number;
  /** Acts to play (1 always; 3 and 5 need 2). */
  acts: ReadonlySet<number>;
  /** After the acts, keep the system up until the signal. */
  keep: boolean;
  /** Where each binary's log file is (METAL_TEST_LOG_DIR). */
  logDir: string;
  /** The control plane's directory (its own logs: kube-apiserver.log, etcd.log). */
  controlPlaneDir: string;
  signal: AbortSignal;
}

/** How many acts the demo has (main.ts checks --acts against it). */
export const ACTS = 7;

/** The share of servers the seeded tenants claim; the rest stays free for act 2's cordon and the orphan. */
export const CLAIMED_SHARE = 0.72;

/** The policy the demo runs with: the defaults, with deadlines and auto-approval in seconds. */
export const DEMO_POLICY = {
  apiVersion: 'policy.maintenance.metal.ironcore.dev/v1alpha1',
  kind: 'MaintenancePolicy',
  classes: {
    Planned: { approvalRequired: true, deadline: '60s', minNotice: '0s', requireWindow: false },
    Urgent: { approvalRequired: true, deadline: '30s', minNotice: '0s', requireWindow: false },
    Emergency: { approvalRequired: false, deadline: '30s', minNotice: '0s', requireWindow: false },
  },
  autoApproval: {
    // Seeded claims carry the tenant label, so they have a consumer; a claim without it has none.
    consumerLabels: [TENANT_LABEL],
    rules: [
      { name: 'no-consumer', when: 'NoConsumer', after: '15s', classes: ['Planned', 'Urgent', 'Emergency'] },
    ],
  },
};

export interface DemoResult {
  ok: boolean;
  lines: string[];
  /** The system was kept up (--keep) until the signal. */
  kept: boolean;
}

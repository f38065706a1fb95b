// The workload-cluster objects the drain controller reads, typed to the fields it uses.
import type { LabelSelector } from '../../api/schema/common.js';
import type { KubeObject } from '../../api/schema/meta.js';

export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

export interface Node extends KubeObject {
  spec?: { providerID?: string; unschedulable?: boolean };
  status?: { conditions?: NodeCondition[] };
}

export interface Pod extends KubeObject {
  spec?: { nodeName?: string; volumes?: { name: string; emptyDir?: unknown }[] };
  status?: { phase?: string };
}

export interface Pdb extends KubeObject {
  spec?: { selector?: LabelSelector };
  /** disruptedPods: pod name → when the Eviction API admitted its eviction (RFC 3339). */
  status?: { disruptionsAllowed?: number; disruptedPods?: Record<string, string> };
}

// The stand-in kubelet's volume manager: writes each volume of a pod (volumePlans in pod-plan.ts) under
// the pod's directory, and keeps it current as the kubelet does: secrets and configMaps re-read every
// sync period (cert-manager's renewals reach the webhook this way), a ServiceAccount token requested
// bound to the pod and requested again at 80 % of its lifetime.
import { join } from 'node:path';
import type { KubeObject } from '../../../api/schema/meta.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { isNotFound } from '../../../lib/kube/errors.js';
import { Core } from '../../../lib/kube/resources.js';
import { writeVolumeVersion } from './atomic-writer.js';
import { PodPlanError, type PodObject, type VolumeFile, type VolumePlan } from './pod-plan.js';

type DataObject = KubeObject & { data?: Record<string, string>; binaryData?: Record<string, string> };

interface TokenRequest {
  status: { token: string; expirationTimestamp: string };
}

/** A pod's volumes on disk: `dirOf(name)` is what a container's mount of that volume binds. */
export interface PodVolumes {
  dirOf(volume: string): string;
  /** Re-reads every source and writes a volume again where its content changed. */
  sync(): Promise<void>;
}

export function podVolumes(
  client: KubeClient,
  pod: PodObject,
  plans: readonly VolumePlan[],
  podDir: string,
  now: () => number = Date.now,
): PodVolumes {
  const namespace = pod.metadata.namespace ?? 'default';
  const written = new Map<string, string>(); // volume → digest of what was written
  const tokens = new Map<string, { token: string; refreshAt: number }>(); // file key → token
  const secrets = client.resource<DataObject>(Core.Secret);
  const configMaps = client.resource<DataObject>(Core.ConfigMap);
  /** The source object; an optional one that does not exist reads as empty. */
  const source = (from: 'secret' | 'configMap', name: string, optional?: boolean): Promise<DataObject> =>
    (from === 'secret' ? secrets : configMaps).get(name, namespace).catch((e: unknown) => {
      if (optional && isNotFound(e)) return { metadata: { name } };
      throw new PodPlanError(
        `pod ${namespace}/${pod.metadata.name}: ${from} ${name}: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    });
  const decoded = (obj: DataObject, from: 'secret' | 'configMap', key: string): Buffer | undefined => {
    if (from === 'secret')
      return obj.data?.[key] === undefined ? undefined : Buffer.from(obj.data[key], 'base64');
    if (obj.data?.[key] !== undefined) return Buffer.from(obj.data[key]);
    return obj.binaryData?.[key] === undefined ? undefined : Buffer.from(obj.binaryData[key], 'base64');
  };
  const token = async (plan: VolumePlan, f: Extract<VolumeFile, { from: 'token' }>) => {
    const key = `${plan.name}/${f.path}`;
    const held = tokens.get(key);
    if (held && now() < held.refreshAt) return held.token;
    const sa = pod.spec.serviceAccountName ?? 'default';
    const path = `${client.resource(Core.ServiceAccount).path(namespace, sa)}/token`;
    const answer = await client.request<TokenRequest>('POST', path, {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          ...(f.audience ? { audiences: [f.audience] } : {}),
          expirationSeconds: f.expirationSeconds,
          boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid },
        },
      },
    });
    tokens.set(key, { token: answer.status.token, refreshAt: now() + f.expirationSeconds * 800 });
    return answer.status.token;
  };
  const filesOf = async (plan: VolumePlan): Promise<Map<string, Buffer | string>> => {
    const files = new Map<string, Buffer | string>();
    if (plan.whole) {
      const obj = await source(plan.whole.from, plan.whole.name, plan.whole.optional);
      const keys = [...Object.keys(obj.data ?? {}), ...Object.keys(obj.binaryData ?? {})];
      for (const k of keys) files.set(k, decoded(obj, plan.whole.from, k)!);
    }
    for (const f of plan.files) {
      if (f.from === 'field') files.set(f.path, f.value);
      else if (f.from === 'token') files.set(f.path, await token(plan, f));
      else {
        const value = decoded(await source(f.from, f.name, f.optional), f.from, f.key);
        if (value === undefined && f.optional) continue;
        if (value === undefined)
          throw new PodPlanError(
            `pod ${namespace}/${pod.metadata.name}: ${f.from} ${f.name} has no key ${f.key}`,
          );
        files.set(f.path, value);
      }
    }
    return files;
  };
  const digest = (files: Map<string, Buffer | string>) =>
    JSON.stringify([...files].map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  return {
    dirOf: (volume) => join(podDir, 'volumes', volume),
    async sync() {
      for (const plan of plans) {
        const files = await filesOf(plan);
        const d = digest(files);
        if (written.get(plan.name) === d) continue;
        writeVolumeVersion(join(podDir, 'volumes', plan.name), files);
        written.set(plan.name, d);
      }
    },
  };
}

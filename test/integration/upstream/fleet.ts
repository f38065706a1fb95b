// The hardware side of the upstream suite: one metal-operator Redfish mock per machine (the mock
// serves one ComputerSystem), each given its own system UUID through Redfish (PATCH, which the mock
// merges like a BMC would keep a field), and a BMC + BMCSecret per mock, as an operator would register
// a machine. metal-operator's own BMC controller then creates the Server (`<bmc>-system-0`, labels
// copied from the BMC) and its server controller discovers it.
import { request } from 'undici';
import type { KubeClient } from '../../../lib/kube/client.js';
import { resourceOf } from '../../../lib/kube/resources.js';
import { BMCKind, type BMC } from '../../../api/metal/v1alpha1/bmc.js';
import { BMCSecretKind, type BMCSecret } from '../../../api/metal/v1alpha1/bmcsecret.js';
import { startMetalMock, type MetalMockPeer } from '../../../e2e/peers/metal-mock.js';

const MOCK_SYSTEM = '/redfish/v1/Systems/437XR1138R2';

export interface Machine {
  index: number;
  bmc: string;
  /** The Server metal-operator's BMC controller creates for the mock's only system. */
  server: string;
  systemUUID: string;
  mock: MetalMockPeer;
}

export const systemUUID = (index: number) =>
  `6d6f636b-0000-4000-8000-${index.toString(16).padStart(12, '0')}`;

async function redfish(mock: MetalMockPeer, method: 'GET' | 'PATCH', path: string, body?: unknown) {
  const auth = Buffer.from(`${mock.credentials.username}:${mock.credentials.password}`).toString('base64');
  const res = await request(`${mock.endpoint}${path}`, {
    method,
    headers: { authorization: `Basic ${auth}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(5_000),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${res.statusCode} ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** The power state the mock (the "machine") reports, not what any Kubernetes object says. */
export async function machinePower(m: Machine): Promise<string> {
  return String((await redfish(m.mock, 'GET', MOCK_SYSTEM)).PowerState);
}

/** Starts `count` mocks; `labels(i)` are the BMC's labels (metal-operator copies them to the Server). */
export async function startMachines(
  admin: KubeClient,
  prefix: string,
  count: number,
  labels: (i: number) => Record<string, string>,
): Promise<Machine[]> {
  const mocks = await Promise.all(Array.from({ length: count }, () => startMetalMock()));
  const bmcs = admin.resource<BMC>(resourceOf(BMCKind));
  const secrets = admin.resource<BMCSecret>(resourceOf(BMCSecretKind));
  return Promise.all(
    mocks.map(async (mock, index) => {
      const uuid = systemUUID(index);
      await redfish(mock, 'PATCH', MOCK_SYSTEM, { UUID: uuid });
      const bmc = `${prefix}-bmc${index}`;
      await secrets.create({
        metadata: { name: bmc },
        stringData: { username: mock.credentials.username, password: mock.credentials.password },
      });
      const port = Number(new URL(mock.endpoint).port);
      await bmcs.create({
        metadata: { name: bmc, labels: labels(index) },
        spec: {
          access: { ip: '127.0.0.1', macAddress: `02:00:00:01:00:${index.toString(16).padStart(2, '0')}` },
          bmcSecretRef: { name: bmc },
          protocol: { name: 'Redfish', port, scheme: 'http' },
        },
      });
      return { index, bmc, server: `${bmc}-system-0`, systemUUID: uuid, mock };
    }),
  );
}

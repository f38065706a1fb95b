// metal-operator's Redfish mock (Go, built by scripts/lib/metal-mock.sh) as a conformance peer.
// Plain HTTP on 127.0.0.1, Basic auth, and a control listener for its 503 mode.
import { join } from 'node:path';
import { request } from 'undici';
import { freePort, preparePeer, startPeer, type PeerProcess } from './process.js';

export interface MetalMockPeer {
  endpoint: string;
  credentials: { username: string; password: string };
  process: PeerProcess;
  setUnavailable: (on: boolean) => Promise<void>;
  /** Puts BIOS, BMC settings and the upgrade task back to their embedded defaults. */
  reset: () => Promise<void>;
  stop: () => Promise<void>;
}

export async function startMetalMock(): Promise<MetalMockPeer> {
  const dir = await preparePeer('metal-mock.sh');
  const [port, controlPort] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${port}`;
  const control = `http://127.0.0.1:${controlPort}`;
  const proc = await startPeer({
    name: 'metal-mock',
    command: join(dir, 'metal-mock'),
    args: ['-addr', `127.0.0.1:${port}`, '-control-addr', `127.0.0.1:${controlPort}`, '-auth=true'],
    url: endpoint,
  });
  const call = async (path: string): Promise<void> => {
    const res = await request(control + path, { method: 'POST' });
    await res.body.dump();
    if (res.statusCode !== 204) throw new Error(`metal-mock control ${path}: HTTP ${res.statusCode}`);
  };
  return {
    endpoint,
    credentials: { username: 'admin', password: 'adminpass' },
    process: proc,
    setUnavailable: (on) => call(`/unavailable?on=${String(on)}`),
    reset: () => call('/reset'),
    stop: () => proc.stop(),
  };
}

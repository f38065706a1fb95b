// sushy-tools (OpenStack's Redfish emulator) as a conformance peer: fake driver, fresh state dir,
// bcrypt Basic auth, TLS with a CA we generate, 127.0.0.1 only.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTls } from '../sim/bmc/tls.js';
import { freePort, preparePeer, startPeer, type PeerProcess } from './process.js';

export interface SushyPeer {
  endpoint: string;
  ca: string;
  credentials: { username: string; password: string };
  /** Fake systems: uuid and name; the first starts Off, the second On. */
  systems: { uuid: string; name: string }[];
  process: PeerProcess;
  stop: () => Promise<void>;
}

const SYSTEMS = [
  { uuid: '7f1c9e54-5b1a-4c8e-9f5e-000000000001', name: 'node-0', power_state: 'Off' },
  { uuid: '7f1c9e54-5b1a-4c8e-9f5e-000000000002', name: 'node-1', power_state: 'On' },
];

function pyLiteral(v: unknown): string {
  return JSON.stringify(v)
    .replace(/\btrue\b/g, 'True')
    .replace(/\bfalse\b/g, 'False');
}

export async function startSushy(): Promise<SushyPeer> {
  const venv = await preparePeer('sushy-tools.sh');
  const python = join(venv, 'bin', 'python');
  const dir = mkdtempSync(join(tmpdir(), 'sushy-peer-'));
  const credentials = { username: 'maint', password: 'sushy-Pass-2718' };
  const tls = generateTls();
  writeFileSync(join(dir, 'cert.pem'), tls.cert);
  writeFileSync(join(dir, 'key.pem'), tls.key);
  const hash = execFileSync(python, [
    '-c',
    'import bcrypt,sys;print(bcrypt.hashpw(sys.argv[1].encode(),bcrypt.gensalt(4)).decode())',
    credentials.password,
  ])
    .toString()
    .trim();
  writeFileSync(join(dir, 'htpasswd'), `${credentials.username}:${hash}\n`);
  const port = await freePort();
  const systems = SYSTEMS.map((s) => ({
    ...s,
    nics: [{ mac: `52:54:00:00:00:0${s.name.slice(-1)}`, ip: '127.0.0.1' }],
  }));
  writeFileSync(
    join(dir, 'emulator.conf'),
    [
      `SUSHY_EMULATOR_LISTEN_IP = '127.0.0.1'`,
      `SUSHY_EMULATOR_LISTEN_PORT = ${port}`,
      `SUSHY_EMULATOR_SSL_CERT = '${join(dir, 'cert.pem')}'`,
      `SUSHY_EMULATOR_SSL_KEY = '${join(dir, 'key.pem')}'`,
      `SUSHY_EMULATOR_AUTH_FILE = '${join(dir, 'htpasswd')}'`,
      `SUSHY_EMULATOR_FAKE_DRIVER = True`,
      `SUSHY_EMULATOR_STATE_DIR = '${join(dir, 'state')}'`,
      `SUSHY_EMULATOR_FAKE_SYSTEMS = ${pyLiteral(systems)}`,
      '',
    ].join('\n'),
  );
  const endpoint = `https://127.0.0.1:${port}`;
  const proc = await startPeer({
    name: 'sushy-emulator',
    command: python,
    args: ['-m', 'sushy_tools.emulator.main', '--config', join(dir, 'emulator.conf')],
    url: endpoint,
    ca: tls.ca,
  });
  return {
    endpoint,
    ca: tls.ca,
    credentials,
    systems: SYSTEMS.map(({ uuid, name }) => ({ uuid, name })),
    process: proc,
    stop: async () => {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

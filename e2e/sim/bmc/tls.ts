// SIMULATOR TLS material: a throw-away CA and a server certificate for 127.0.0.1/localhost,
// made with the openssl CLI (Node's crypto cannot issue X.509 certificates). Clients pin the CA.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SimTls {
  /** PEM of the CA that signed the server certificate. */
  ca: string;
  cert: string;
  key: string;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT') {
      throw new Error('the BMC simulator needs the openssl CLI (Debian: apt-get install openssl)', {
        cause: e,
      });
    }
    throw e;
  }
}

export function generateTls(): SimTls {
  const dir = mkdtempSync(join(tmpdir(), 'bmc-sim-tls-'));
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl(
      ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '30']
        .concat(['-subj', '/CN=metal-maintenance BMC simulator CA'])
        .concat([
          '-addext',
          'basicConstraints=critical,CA:TRUE',
          '-addext',
          'keyUsage=critical,keyCertSign,cRLSign',
        ]),
      dir,
    );
    openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
    writeFileSync(
      join(dir, 'ext.cnf'),
      'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
    );
    openssl(
      ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial'].concat([
        '-out',
        'server.crt',
        '-days',
        '30',
        '-extfile',
        'ext.cnf',
      ]),
      dir,
    );
    const read = (f: string): string => readFileSync(join(dir, f), 'utf8');
    return { ca: read('ca.crt'), cert: read('server.crt'), key: read('server.key') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

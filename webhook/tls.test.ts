// Certificate rotation against a real HTTPS server: certificates come from the openssl CLI, are
// rotated the way Kubernetes updates a Secret volume (an atomic `..data` symlink swap) while requests
// flow, and no request may fail.
import { execFileSync } from 'node:child_process';
import {
  mkdtempSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  copyFileSync,
} from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { PolicyStore } from '../lib/policy/store.js';
import { DEFAULT_POLICY } from '../policies/schema.js';
import { MemoryBudgetStore } from '../contract/testing/memory-budget-store.js';
import { MemoryWorld } from './testing/memory-world.js';
import { createWebhookServer, type WebhookServer } from './server.js';
import { loadReview, loadWorld } from './testdata/load.js';
import { CertReloader, validatePair } from './tls.js';
import { createGrantor } from './grants/reserve.js';

const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
const file = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
/** Space-separated openssl arguments (none of ours holds a space). */
const args = (line: string) => line.split(' ');

/** A self-signed CA `name`.crt/.key. */
function makeCA(name: string): void {
  openssl('req', '-x509', ...ec, ...args(`-keyout ${name}.key -out ${name}.crt -days 1 -subj /CN=${name}`));
}

/** `name`.crt/.key for subject CN `cn`, signed by CA `ca`, with these x509v3 extensions. */
function makeSigned(name: string, cn: string, ca: string, extensions: string): { cert: Buffer; key: Buffer } {
  openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
  writeFileSync(file(`${name}.ext`), `${extensions}\n`);
  openssl(
    'x509',
    ...args(`-req -in ${name}.csr -CA ${ca}.crt -CAkey ${ca}.key -CAcreateserial -out ${name}.crt`),
    ...args(`-days 1 -extfile ${name}.ext`),
  );
  return { cert: readFileSync(file(`${name}.crt`)), key: readFileSync(file(`${name}.key`)) };
}

/** A client certificate `name`.crt/.key signed by CA `ca`. */
const makeClient = (name: string, ca: string) => makeSigned(name, name, ca, 'extendedKeyUsage=clientAuth');

beforeAll(() => {
  makeCA('ca');
  for (const n of [1, 2])
    makeSigned(`leaf${n}`, `webhook-${n}`, 'ca', 'subjectAltName=DNS:localhost,IP:127.0.0.1');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Lays out a Secret volume like the kubelet: tls.crt -> ..data/tls.crt, ..data -> a timestamped dir. */
function secretVolume(name: string, leaf: number): string {
  const vol = file(name);
  mkdirSync(join(vol, `..v${leaf}`), { recursive: true });
  copyFileSync(file(`leaf${leaf}.crt`), join(vol, `..v${leaf}`, 'tls.crt'));
  copyFileSync(file(`leaf${leaf}.key`), join(vol, `..v${leaf}`, 'tls.key'));
  symlinkSync(`..v${leaf}`, join(vol, '..data'));
  symlinkSync('..data/tls.crt', join(vol, 'tls.crt'));
  symlinkSync('..data/tls.key', join(vol, 'tls.key'));
  return vol;
}

/** The kubelet's rotation: write the new files to a new dir, then atomically re-point ..data. */
function rotate(vol: string, leaf: number): void {
  mkdirSync(join(vol, `..v${leaf}`));
  copyFileSync(file(`leaf${leaf}.crt`), join(vol, `..v${leaf}`, 'tls.crt'));
  copyFileSync(file(`leaf${leaf}.key`), join(vol, `..v${leaf}`, 'tls.key'));
  symlinkSync(`..v${leaf}`, join(vol, '..data_tmp'));
  renameSync(join(vol, '..data_tmp'), join(vol, '..data'));
}

async function startServer(
  vol: string,
  intervalMs: number,
  clientCAFile?: string,
  logger?: Logger,
): Promise<{ server: WebhookServer; port: number; reloader: CertReloader }> {
  const reloader = new CertReloader(
    {
      certFile: join(vol, 'tls.crt'),
      keyFile: join(vol, 'tls.key'),
      ...(clientCAFile ? { clientCAFile } : {}),
    },
    { intervalMs },
  );
  const pair = await reloader.load();
  const server = createWebhookServer({
    world: new MemoryWorld(loadWorld()),
    policies: new PolicyStore({ initial: DEFAULT_POLICY }),
    grant: createGrantor(new MemoryBudgetStore()),
    isReady: () => true,
    registry: new Registry(),
    tls: pair,
    ...(logger ? { logger } : {}),
  });
  server.watchCertificates(reloader);
  await server.app.listen({ port: 0, host: '127.0.0.1' });
  const address = server.app.server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0, reloader };
}

interface Answer {
  status: number;
  cn: string;
  uid: string;
}

/** One POST on a new TLS connection (so each sees the context in force), with any answer. */
function post(
  port: number,
  ca: Buffer,
  body: string,
  client?: { cert: Buffer; key: Buffer },
): Promise<{ status: number; body: string; cn: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        ...client,
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        path: '/validate/placement',
        method: 'POST',
        ca,
        agent: false,
        headers: { 'content-type': 'application/json', connection: 'close' },
        timeout: 5000,
      },
      (res) => {
        const cn = String((res.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
        let data = '';
        res.on('data', (c: Buffer) => (data += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data, cn }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** A POST that must come back as an AdmissionReview: its status, the serving certificate's CN, the uid. */
async function admit(
  port: number,
  ca: Buffer,
  body: string,
  client?: { cert: Buffer; key: Buffer },
): Promise<Answer> {
  const res = await post(port, ca, body, client);
  return {
    status: res.status,
    cn: res.cn,
    uid: (JSON.parse(res.body) as { response: { uid: string } }).response.uid,
  };
}

describe('serving certificate rotation', () => {
  it('serves the rotated certificate without a restart and fails no request while rotating', async () => {
    const vol = secretVolume('vol-a', 1);
    const { server, port } = await startServer(vol, 20);
    const ca = readFileSync(file('ca.crt'));
    const review = loadReview('claim-create-cordoned');
    const body = JSON.stringify(review);
    const answers: Answer[] = [];
    const failures: unknown[] = [];
    let stop = false;
    const loop = async () => {
      while (!stop) {
        try {
          answers.push(await admit(port, ca, body));
        } catch (e) {
          failures.push(e);
        }
      }
    };
    try {
      const loops = [loop(), loop(), loop(), loop()];
      // Counted, not timed: at least ten answers on each side of the switch, however busy the machine.
      const until = async (done: () => boolean) => {
        const deadline = Date.now() + 10_000;
        while (Date.now() < deadline && !done()) await new Promise((r) => setTimeout(r, 20));
      };
      await until(() => answers.length >= 10);
      const before = answers.length;
      rotate(vol, 2);
      const switched = () => answers.findIndex((a) => a.cn === 'webhook-2');
      await until(() => switched() >= 0 && answers.length - switched() >= 10);
      stop = true;
      await Promise.all(loops);
      expect(failures).toEqual([]);
      expect(before).toBeGreaterThanOrEqual(10);
      expect(answers.length - switched()).toBeGreaterThanOrEqual(10);
      expect(answers.every((a) => a.status === 200 && a.uid === review.request.uid)).toBe(true);
      expect(answers[0]!.cn).toBe('webhook-1');
      expect(answers.at(-1)!.cn).toBe('webhook-2');
      // Once switched, never back.
      const firstNew = answers.findIndex((a) => a.cn === 'webhook-2');
      expect(answers.slice(firstNew).every((a) => a.cn === 'webhook-2')).toBe(true);
      expect(await server.registry.getSingleMetric('metal_webhook_tls_reloads_total')!.get()).toMatchObject({
        values: [expect.objectContaining({ labels: { result: 'reloaded' }, value: 1 })],
      });
    } finally {
      stop = true;
      await server.app.close();
    }
  }, 20000);

  it('keeps the old pair while a rotation is half written, and takes the new one once complete', async () => {
    const vol = file('vol-b');
    mkdirSync(vol);
    copyFileSync(file('leaf1.crt'), join(vol, 'tls.crt'));
    copyFileSync(file('leaf1.key'), join(vol, 'tls.key'));
    const { server, port, reloader } = await startServer(vol, 60_000);
    const ca = readFileSync(file('ca.crt'));
    const body = JSON.stringify(loadReview('claim-create-cordoned'));
    try {
      copyFileSync(file('leaf2.crt'), join(vol, 'tls.crt')); // certificate first, key not yet
      expect(await reloader.check()).toBe('invalid');
      expect((await admit(port, ca, body)).cn).toBe('webhook-1');
      copyFileSync(file('leaf2.key'), join(vol, 'tls.key'));
      expect(await reloader.check()).toBe('reloaded');
      expect(await reloader.check()).toBe('unchanged');
      expect((await admit(port, ca, body)).cn).toBe('webhook-2');
      rmSync(join(vol, 'tls.key'));
      expect(await reloader.check()).toBe('error');
      expect((await admit(port, ca, body)).cn).toBe('webhook-2');
    } finally {
      await server.app.close();
    }
  }, 20000);

  it('refuses to start from a mismatched pair', async () => {
    expect(() =>
      validatePair({ cert: readFileSync(file('leaf1.crt')), key: readFileSync(file('leaf2.key')) }),
    ).toThrow(/METAL_ERR_TLS_INVALID|does not match/);
    const reloader = new CertReloader({ certFile: file('leaf1.crt'), keyFile: file('leaf2.key') });
    await expect(reloader.load()).rejects.toThrow('private key does not match');
    expect(() =>
      validatePair({ cert: Buffer.from('not a cert'), key: readFileSync(file('leaf1.key')) }),
    ).toThrow(/serving certificate rejected/);
  });
});

describe('protocol', () => {
  /** The protocol ALPN settles on when a client offers these (HTTP/2-capable clients offer h2 first). */
  const negotiate = (port: number, offered: string[]) =>
    new Promise<string | false>((resolve, reject) => {
      const socket = tlsConnect(
        {
          host: '127.0.0.1',
          servername: 'localhost',
          port,
          ca: readFileSync(file('ca.crt')),
          ALPNProtocols: offered,
        },
        () => {
          resolve(socket.alpnProtocol ?? false);
          socket.end();
        },
      );
      socket.setTimeout(5000, () => socket.destroy(new Error('no handshake within 5 s')));
      socket.on('error', reject);
    });

  it('offers no HTTP/2: h2 first gets HTTP/1.1, h2 alone is refused (docs/webhook.md, "Why HTTP/1.1")', async () => {
    const { server, port, reloader } = await startServer(secretVolume('alpn', 1), 1000);
    try {
      expect(await negotiate(port, ['h2', 'http/1.1'])).toBe('http/1.1');
      await expect(negotiate(port, ['h2'])).rejects.toThrow(/no application protocol/i);
    } finally {
      reloader.stop();
      await server.app.close();
    }
  });
});

describe('client certificates (--client-ca-file)', () => {
  const refused = async (server: WebhookServer) =>
    (await server.registry.getSingleMetric('metal_webhook_unauthenticated_requests_total')!.get()).values.map(
      (v) => [v.labels.reason, v.value],
    );

  it('serves a caller whose certificate the client CA signed, and refuses anyone else at the handshake', async () => {
    makeCA('client-ca');
    const apiserver = makeClient('apiserver', 'client-ca');
    const stranger = makeClient('stranger', 'ca'); // signed by a CA the webhook does not trust for clients
    const vol = file('vol-c');
    mkdirSync(vol);
    copyFileSync(file('leaf1.crt'), join(vol, 'tls.crt'));
    copyFileSync(file('leaf1.key'), join(vol, 'tls.key'));
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const { server, port } = await startServer(vol, 60_000, file('client-ca.crt'), pino(sink));
    const ca = readFileSync(file('ca.crt'));
    const review = loadReview('claim-create-cordoned');
    const body = JSON.stringify(review);
    try {
      expect(await admit(port, ca, body, apiserver)).toMatchObject({ status: 200, uid: review.request.uid });
      // Refused before the body is read, with a 401 that says why (the API server logs it).
      for (const [client, why] of [
        [undefined, 'no client certificate'],
        [stranger, 'not signed by the client CA'],
      ] as const) {
        const res = await post(port, ca, body, client);
        expect(res.status).toBe(401);
        expect(res.body).toContain('METAL_ERR_UNAUTHENTICATED');
        expect(res.body).toContain(why);
      }
      // One warning for both refusals (then at most one a minute): where the caller came from, and why.
      expect(lines.filter((l) => l.level === 40)).toEqual([
        expect.objectContaining({ reason: 'NoClientCertificate', remote: '127.0.0.1', alsoRefused: 0 }),
      ]);
      await expect(refused(server)).resolves.toEqual(
        expect.arrayContaining([
          ['NoClientCertificate', 1],
          ['UntrustedClientCertificate', 1],
        ]),
      );
    } finally {
      await server.app.close();
    }
  }, 20000);

  it('takes a rotated client CA without a restart', async () => {
    makeCA('client-ca-old');
    makeCA('client-ca-new');
    const oldClient = makeClient('apiserver-old', 'client-ca-old');
    const newClient = makeClient('apiserver-new', 'client-ca-new');
    const vol = file('vol-d');
    mkdirSync(vol);
    copyFileSync(file('leaf1.crt'), join(vol, 'tls.crt'));
    copyFileSync(file('leaf1.key'), join(vol, 'tls.key'));
    copyFileSync(file('client-ca-old.crt'), join(vol, 'client-ca.crt'));
    const { server, port, reloader } = await startServer(vol, 60_000, join(vol, 'client-ca.crt'));
    const ca = readFileSync(file('ca.crt'));
    const body = JSON.stringify(loadReview('claim-create-cordoned'));
    try {
      expect((await admit(port, ca, body, oldClient)).status).toBe(200);
      expect((await post(port, ca, body, newClient)).status).toBe(401);
      copyFileSync(file('client-ca-new.crt'), join(vol, 'client-ca.crt'));
      expect(await reloader.check()).toBe('reloaded');
      expect((await admit(port, ca, body, newClient)).status).toBe(200);
      expect((await post(port, ca, body, oldClient)).status).toBe(401);
    } finally {
      await server.app.close();
    }
  }, 20000);

  it('refuses a client CA bundle that would lock every caller out', () => {
    const pair = { cert: readFileSync(file('leaf1.crt')), key: readFileSync(file('leaf1.key')) };
    expect(() => validatePair({ ...pair, clientCA: Buffer.from('') })).toThrow(/holds no PEM certificate/);
    expect(() => validatePair({ ...pair, clientCA: readFileSync(file('leaf2.crt')) })).toThrow(/not a CA/);
  });
});

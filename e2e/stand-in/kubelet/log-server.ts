// The stand-in kubelet's one HTTP endpoint the API server uses: GET /containerLogs/<ns>/<pod>/<container>,
// which `kubectl logs` (the pods/log subresource) reaches through the API server, on the port the Node
// advertises (status.daemonEndpoints.kubeletEndpoint). HTTPS with a certificate made at start; the API
// server here is given no kubelet CA, so it does not verify it, and the stand-in does not authenticate
// the API server (a real kubelet checks its client certificate): it listens only inside the stand-in
// cluster's network namespace. `tailLines` is honoured; `follow` is not (the answer ends at once).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';

export const KUBELET_PORT = 10250;

/** The last `tailLines` lines of `text` (all of it when undefined). */
export function tail(text: string, tailLines: number | undefined): string {
  if (tailLines === undefined) return text;
  const lines = text.split('\n');
  const last = lines.at(-1) === '' ? lines.slice(0, -1) : lines;
  const kept = last.slice(Math.max(0, last.length - tailLines));
  return kept.length ? `${kept.join('\n')}\n` : '';
}

/** A self-signed serving certificate for `ip`, written to DIR/kubelet.{crt,key}. */
function servingCertificate(dir: string, ip: string): { cert: Buffer; key: Buffer } {
  const crt = join(dir, 'kubelet.crt');
  const key = join(dir, 'kubelet.key');
  if (!existsSync(crt))
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-keyout',
        key,
        '-out',
        crt,
        '-subj',
        '/CN=stand-in-kubelet',
        '-addext',
        `subjectAltName=IP:${ip}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  return { cert: readFileSync(crt), key: readFileSync(key) };
}

export function startLogServer(
  dir: string,
  ip: string,
  logFile: (namespace: string, pod: string, container: string) => string | undefined,
): Promise<Server> {
  const { cert, key } = servingCertificate(dir, ip);
  const server = createServer({ cert, key }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    const file =
      m && logFile(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), decodeURIComponent(m[3]!));
    if (req.method !== 'GET' || !m || !file || !existsSync(file)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`no such container log: ${url.pathname}\n`);
      return;
    }
    const tailLines = url.searchParams.get('tailLines');
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(tail(readFileSync(file, 'utf8'), tailLines === null ? undefined : Number(tailLines)));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(KUBELET_PORT, ip, () => resolve(server));
  });
}

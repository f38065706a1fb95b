// Where a binary's API server is and how it proves who it is: the server URL, the TLS material and
// the credential headers, from a kubeconfig, or from the pod's ServiceAccount in a cluster.
//
// Static credentials (client certificates, tokens, token files, basic auth) are read here: that is
// all a binary of ours is given, in a cluster or in the tests. A kubeconfig that needs a plugin
// (`exec`, `auth-provider`), impersonation or several merged files goes to
// @kubernetes/client-node, imported only then: importing it loads its whole generated API surface,
// about 70 MiB of resident memory in every process (docs/dependencies.md).
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { MetalError } from '../errors.js';

export const KUBECONFIG_ERROR = 'METAL_ERR_KUBECONFIG';

/** Where the kubelet mounts a pod's ServiceAccount token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface TlsMaterial {
  /** PEM; undefined: the system's CAs. */
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
  servername?: string;
}

export interface ClusterAccess {
  server: string;
  tls: TlsMaterial;
  /** The credential as request headers, read again on each call (a token file rotates). */
  credentials(): Promise<Record<string, string>>;
  /** Where it came from, for messages (never the credential). */
  source: string;
}

export interface KubeconfigOptions {
  /** Relative file references resolve against this directory (the kubeconfig file's). */
  baseDir?: string;
  /**
   * A kubeconfig from elsewhere (a Secret naming a workload cluster) may not read this process's
   * files nor run commands: a `tokenFile` of our own ServiceAccount token would hand it to whatever
   * server the document names. Flux refuses exec in such kubeconfigs for the same reason.
   */
  untrusted?: boolean;
  /** For messages: the file, or the Secret and key. */
  source?: string;
}

const fail = (source: string, why: string) =>
  new MetalError(KUBECONFIG_ERROR, `${source}: ${why}`, { source });

type Named<K extends string, T> = { name?: string } & { [key in K]?: T };
interface ClusterEntry {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
}
interface UserEntry {
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  exec?: unknown;
  'auth-provider'?: unknown;
  as?: string;
  'as-groups'?: unknown;
  'as-uid'?: string;
  'as-user-extra'?: unknown;
}
interface Document {
  'current-context'?: string;
  clusters?: Named<'cluster', ClusterEntry>[];
  users?: Named<'user', UserEntry>[];
  contexts?: Named<'context', { cluster?: string; user?: string }>[];
}

/** User fields only client-node handles. */
const PLUGIN_FIELDS = ['exec', 'auth-provider', 'as', 'as-groups', 'as-uid', 'as-user-extra'] as const;

/** The current context's cluster and user of a kubeconfig document. */
function currentEntries(
  text: string,
  source: string,
): { cluster: ClusterEntry & { server: string }; user: UserEntry } {
  let doc: Document;
  try {
    doc = (parse(text) ?? {}) as Document;
  } catch {
    // The parser's message may quote the document, credentials included: say only where.
    throw fail(source, 'not valid YAML');
  }
  if (typeof doc !== 'object') throw fail(source, 'not a kubeconfig (expected a mapping)');
  const contextName = doc['current-context'];
  if (!contextName) throw fail(source, 'no current-context');
  const context = doc.contexts?.find((c) => c.name === contextName)?.context;
  if (!context) throw fail(source, `current-context "${contextName}" is not among its contexts`);
  const cluster = doc.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster?.server) throw fail(source, `context "${contextName}" names no cluster with a server`);
  return {
    cluster: { ...cluster, server: cluster.server },
    user: doc.users?.find((u) => u.name === context.user)?.user ?? {},
  };
}

/** Reads what a field names: its inline data, else its file (resolved against baseDir). */
function reader(source: string, opts: KubeconfigOptions) {
  const path = (field: string, p: string | undefined): string | undefined => {
    if (p === undefined) return undefined;
    if (opts.untrusted) throw fail(source, `${field} names a file; only inline data is allowed here`);
    return isAbsolute(p) || !opts.baseDir ? p : join(opts.baseDir, p);
  };
  return {
    path,
    read(field: string, data: string | undefined, file: string | undefined): string | undefined {
      if (data !== undefined) return Buffer.from(data, 'base64').toString('utf8');
      const at = path(field, file);
      if (at === undefined) return undefined;
      try {
        return readFileSync(at, 'utf8');
      } catch (e) {
        throw fail(source, `${field} ${at}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`);
      }
    },
  };
}

function tlsOf(cluster: ClusterEntry, user: UserEntry, r: ReturnType<typeof reader>): TlsMaterial {
  return {
    ca: r.read(
      'certificate-authority',
      cluster['certificate-authority-data'],
      cluster['certificate-authority'],
    ),
    cert: r.read('client-certificate', user['client-certificate-data'], user['client-certificate']),
    key: r.read('client-key', user['client-key-data'], user['client-key']),
    rejectUnauthorized: cluster['insecure-skip-tls-verify'] !== true,
    ...(cluster['tls-server-name'] ? { servername: cluster['tls-server-name'] } : {}),
  };
}

/** The user's static credential as headers: a token, a token file (read each time), basic auth. */
function headersOf(
  user: UserEntry,
  tokenPath: string | undefined,
  source: string,
): () => Record<string, string> {
  return (): Record<string, string> => {
    if (user.token) return { authorization: `Bearer ${user.token}` };
    if (tokenPath) return { authorization: `Bearer ${readToken(tokenPath, source)}` };
    if (user.username !== undefined && user.password !== undefined) {
      const basic = Buffer.from(`${user.username}:${user.password}`).toString('base64');
      return { authorization: `Basic ${basic}` };
    }
    return {};
  };
}

/** Access from a kubeconfig document's current context. */
export async function accessFromKubeconfig(
  text: string,
  opts: KubeconfigOptions = {},
): Promise<ClusterAccess> {
  const source = opts.source ?? 'kubeconfig';
  const { cluster, user } = currentEntries(text, source);
  // Requests go over our own undici pool, which client-node's proxy agent would not be part of.
  if (cluster['proxy-url'])
    throw fail(source, 'proxy-url is not supported: the API server must be reachable directly');
  const plugins = PLUGIN_FIELDS.filter((f) => user[f] !== undefined);
  if (plugins.length > 0) {
    if (opts.untrusted)
      throw fail(source, `${plugins.join(', ')} is not allowed here: give static credentials`);
    return viaClientNode((kc) => kc.loadFromString(text), source);
  }
  const r = reader(source, opts);
  const tls = tlsOf(cluster, user, r);
  if (Boolean(tls.cert) !== Boolean(tls.key))
    throw fail(source, 'a client certificate needs both the certificate and its key');
  const tokenPath = r.path('tokenFile', user.tokenFile);
  // A token file that cannot be read fails now, not at the first request.
  if (tokenPath) readToken(tokenPath, source);
  const headers = headersOf(user, tokenPath, source);
  return { server: cluster.server.replace(/\/$/, ''), tls, credentials: () => settled(headers), source };
}

/** `f`'s value as a promise, its throw as a rejection. */
const settled = <T>(f: () => T): Promise<T> => new Promise((resolve) => resolve(f()));

function readToken(path: string, source: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (e) {
    throw fail(source, `token file ${path}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
}

export async function accessFromFile(path: string): Promise<ClusterAccess> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw fail(path, (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'unreadable');
  }
  return accessFromKubeconfig(text, { baseDir: dirname(path), source: path });
}

/**
 * The pod's ServiceAccount, as client-go's rest.InClusterConfig: KUBERNETES_SERVICE_HOST/PORT, the
 * mounted CA, and the token file read again on each call (the kubelet rotates it).
 */
export function inClusterAccess(
  env: NodeJS.ProcessEnv = process.env,
  dir = SERVICE_ACCOUNT_DIR,
): ClusterAccess {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  const source = 'the in-cluster ServiceAccount';
  if (!host || !port) throw fail(source, 'KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
  const tokenPath = join(dir, 'token');
  readToken(tokenPath, source);
  let ca: string;
  try {
    ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
  } catch {
    throw fail(source, `no CA at ${join(dir, 'ca.crt')}`);
  }
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    tls: { ca, rejectUnauthorized: true },
    credentials: () => settled(() => ({ authorization: `Bearer ${readToken(tokenPath, source)}` })),
    source,
  };
}

/** $KUBECONFIG (one file; several are merged by client-node), else ~/.kube/config, else in-cluster. */
export async function accessFromEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<ClusterAccess> {
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  if (listed.length > 1) return viaClientNode((kc) => kc.loadFromDefault(), `KUBECONFIG ${env.KUBECONFIG}`);
  if (listed.length === 1) return accessFromFile(listed[0]!);
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return accessFromFile(home);
  return inClusterAccess(env);
}

/** Access through a client-node KubeConfig (its plugins, merging, impersonation). */
export async function accessFromClientNode(kc: KubeConfig, source = 'kubeconfig'): Promise<ClusterAccess> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw fail(source, 'no current context with a cluster');
  const opts: RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const pem = (v: unknown) =>
    typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString('utf8') : undefined;
  return {
    server: cluster.server.replace(/\/$/, ''),
    tls: {
      ca: pem(opts.ca),
      cert: pem(opts.cert),
      key: pem(opts.key),
      rejectUnauthorized: opts.rejectUnauthorized ?? true,
      ...(opts.servername ? { servername: opts.servername } : {}),
    },
    credentials: async () => {
      const o: RequestOptions = {};
      await kc.applyToHTTPSOptions(o);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(o.headers ?? {}))
        if (typeof v === 'string' || typeof v === 'number') headers[k.toLowerCase()] = String(v);
      if (o.auth) headers.authorization = `Basic ${Buffer.from(o.auth).toString('base64')}`;
      return headers;
    },
    source,
  };
}

async function viaClientNode(load: (kc: KubeConfig) => void, source: string): Promise<ClusterAccess> {
  const { KubeConfig: Config } = await import('@kubernetes/client-node');
  const kc = new Config();
  try {
    load(kc);
  } catch {
    throw fail(source, 'not a valid kubeconfig');
  }
  return accessFromClientNode(kc, source);
}

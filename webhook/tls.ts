// Serving certificate (and the CA that signs the API server's client certificate, when the webhook
// checks one) from files, re-read when they rotate, without a restart. Kubernetes updates a
// Secret volume by swapping a `..data` symlink, which a file watch on tls.crt misses after the first
// rotation, so we poll: re-read both files, compare a hash, check that the key belongs to the
// certificate, and only then hand the pair over (fastify: server.setSecureContext). A half-written
// pair (cert rotated, key not yet) fails the check and is retried at the next poll; the old pair stays.
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { defineError, errorMessage } from '../lib/errors.js';
import type { Logger } from '../lib/log.js';

export interface CertPair {
  key: Buffer;
  cert: Buffer;
  /** CA bundle a client's certificate must chain to; without it, clients are not asked for one. */
  clientCA?: Buffer;
}

export interface CertFiles {
  certFile: string;
  keyFile: string;
  /** PEM bundle of the CA that signs the API server's client certificate (re-read with the pair). */
  clientCAFile?: string;
}

/** The options of a TLS context serving `pair` (the server's, and every swap after a rotation). */
export function secureContextOf(pair: CertPair): { key: Buffer; cert: Buffer; ca?: Buffer } {
  return pair.clientCA
    ? { key: pair.key, cert: pair.cert, ca: pair.clientCA }
    : { key: pair.key, cert: pair.cert };
}

export const certInvalid = defineError(
  'METAL_ERR_TLS_INVALID',
  (why: string) => `serving certificate rejected: ${why}`,
);

/** Checks that key and certificate form a usable pair; throws METAL_ERR_TLS_INVALID if not. */
export function validatePair(pair: CertPair): X509Certificate {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(pair.cert);
    if (!x509.checkPrivateKey(createPrivateKey(pair.key)))
      throw new Error('private key does not match the certificate');
    if (pair.clientCA) checkClientCA(pair.clientCA);
    createSecureContext(secureContextOf(pair));
  } catch (e) {
    throw certInvalid(errorMessage(e));
  }
  return x509;
}

/** A client CA bundle must hold at least one CA certificate: an empty or garbled file would lock everyone out. */
function checkClientCA(pem: Buffer): void {
  const blocks = pem.toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks) throw new Error('client CA bundle holds no PEM certificate');
  for (const block of blocks) {
    if (!new X509Certificate(block).ca)
      throw new Error('client CA bundle holds a certificate that is not a CA');
  }
}

export async function readPair(files: CertFiles): Promise<CertPair> {
  const [cert, key, clientCA] = await Promise.all([
    readFile(files.certFile),
    readFile(files.keyFile),
    files.clientCAFile ? readFile(files.clientCAFile) : undefined,
  ]);
  return clientCA ? { cert, key, clientCA } : { cert, key };
}

const hashOf = (pair: CertPair) =>
  createHash('sha256')
    .update(pair.cert)
    .update('\0')
    .update(pair.key)
    .update('\0')
    .update(pair.clientCA ?? '')
    .digest('hex');

export type ReloadResult = 'unchanged' | ReloadChange;
/** The outcome of a check that found the files changed: the only ones reported to `onResult`. */
export type ReloadChange = 'reloaded' | 'invalid' | 'error';

export interface CertReloaderOptions {
  intervalMs?: number;
  logger?: Logger;
  /** Told about every check that found something (for metrics). */
  onResult?: (result: ReloadChange) => void;
}

export class CertReloader {
  readonly #files: CertFiles;
  readonly #options: CertReloaderOptions;
  #hash: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #apply: ((pair: CertPair) => void) | undefined;
  #checking: Promise<ReloadResult> | undefined;
  #onResult: ((result: ReloadChange) => void) | undefined;

  constructor(files: CertFiles, options: CertReloaderOptions = {}) {
    this.#files = files;
    this.#options = options;
  }

  /** Reads and validates the current pair; throws when it is unusable (at startup there is no old one). */
  async load(): Promise<CertPair> {
    const pair = await readPair(this.#files);
    validatePair(pair);
    this.#hash = hashOf(pair);
    return pair;
  }

  /** One poll: swaps in the pair if it changed and is valid. Never throws. */
  check(): Promise<ReloadResult> {
    // One check at a time: a slow disk must not make two overlapping swaps.
    this.#checking ??= this.#check().finally(() => (this.#checking = undefined));
    return this.#checking;
  }

  async #check(): Promise<ReloadResult> {
    let result: ReloadChange;
    try {
      const pair = await readPair(this.#files);
      const hash = hashOf(pair);
      if (hash === this.#hash) return 'unchanged';
      try {
        const x509 = validatePair(pair);
        this.#apply?.(pair);
        this.#hash = hash;
        this.#options.logger?.info(
          { subject: x509.subject, validTo: x509.validTo, serial: x509.serialNumber },
          'serving certificate reloaded',
        );
        result = 'reloaded';
      } catch (e) {
        this.#options.logger?.warn(
          { err: errorMessage(e) },
          'new serving certificate not usable yet; keeping the old one',
        );
        result = 'invalid';
      }
    } catch (e) {
      this.#options.logger?.warn(
        { err: errorMessage(e) },
        'cannot read serving certificate files; keeping the old one',
      );
      result = 'error';
    }
    this.#options.onResult?.(result);
    this.#onResult?.(result);
    return result;
  }

  /**
   * Starts polling; `apply` receives each new valid pair, `onResult` the outcome of each check that found a
   * change (an unchanged pair reports nothing).
   */
  start(apply: (pair: CertPair) => void, onResult?: (result: ReloadChange) => void): void {
    this.#apply = apply;
    this.#onResult = onResult;
    this.stop();
    this.#timer = setInterval(() => void this.check(), this.#options.intervalMs ?? 30_000);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

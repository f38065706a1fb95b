// Conditional writes: PATCH with `If-Match` where the resource has an ETag, re-read and retry on
// 412, add the precondition when a BMC demands it (428). Actions (POST) never go through here.
import { sleep, type RedfishClient, type RedfishResponse } from './client.js';
import { RedfishError, RedfishErrorCode, isHttpStatus } from './errors.js';

export interface PatchOptions {
  /** ETag the caller already holds (from a read it just did). */
  etag?: string;
  /**
   * Where the current ETag is read from on 412/428. Default: GET of the PATCHed path. Settings
   * objects that cannot be read (AMI `SD`) pass the parent's `@Redfish.Settings.ETag` here.
   */
  readEtag?: () => Promise<string | undefined>;
  /** `never`: send no If-Match at all (resources known to mishandle it). Default `auto`. */
  ifMatch?: 'auto' | 'never';
  /** Attempts before giving up with METAL_ERR_REDFISH_CONFLICT. Default 4 (the whole ladder). */
  attempts?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** `W/"abc"` → `"abc"`: some BMCs only compare strong tags. */
export function strongEtag(etag: string): string {
  return etag.startsWith('W/') ? etag.slice(2) : etag;
}

async function currentEtag(
  client: RedfishClient,
  path: string,
  opts: PatchOptions,
): Promise<string | undefined> {
  if (opts.readEtag) return opts.readEtag();
  try {
    return (await client.getWithEtag(path, { timeoutMs: opts.timeoutMs, signal: opts.signal })).etag;
  } catch (e) {
    if (isHttpStatus(e, 404, 405)) return undefined;
    throw e;
  }
}

/**
 * PATCH `body` onto `path`. Sequence on a failed precondition (sushy's order): fresh ETag, the
 * same ETag made strong, then no If-Match. A 428 means the BMC wants If-Match: read one and send
 * it; if the resource has none, the BMC cannot be satisfied and the error says so.
 */
export async function patchResource<T = unknown>(
  client: RedfishClient,
  path: string,
  body: unknown,
  opts: PatchOptions = {},
): Promise<RedfishResponse<T>> {
  const attempts = opts.attempts ?? 4;
  const never = opts.ifMatch === 'never';
  let etag = never ? undefined : opts.etag;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const headers: Record<string, string> = etag ? { 'if-match': etag } : {};
    try {
      return await client.patch<T>(path, body, { headers, timeoutMs: opts.timeoutMs, signal: opts.signal });
    } catch (e) {
      lastError = e;
      if (isHttpStatus(e, 428)) etag = await requiredEtag(client, path, opts);
      else if (isHttpStatus(e, 412) && !never) etag = await nextEtag(client, path, opts, attempt);
      else throw e;
    }
  }
  throw new RedfishError(
    RedfishErrorCode.Conflict,
    `PATCH ${path} kept failing its precondition after ${attempts} attempts`,
    { path, status: 412 },
    lastError,
  );
}

/** After 428: the BMC wants If-Match; without an ETag to send it cannot be satisfied. */
async function requiredEtag(client: RedfishClient, path: string, opts: PatchOptions): Promise<string> {
  const fresh = await currentEtag(client, path, opts);
  if (fresh) return fresh;
  throw new RedfishError(
    RedfishErrorCode.Conflict,
    `PATCH ${path}: the BMC requires If-Match (428) but the resource exposes no ETag`,
    { path, status: 428 },
  );
}

/** After the n-th 412: the fresh ETag, then the same made strong, then none at all. */
async function nextEtag(
  client: RedfishClient,
  path: string,
  opts: PatchOptions,
  attempt: number,
): Promise<string | undefined> {
  client.log.debug({ event: 'redfish.precondition_failed', path, attempt }, 'ETag mismatch; re-reading');
  if (attempt >= 3) return undefined;
  const fresh = await currentEtag(client, path, opts);
  return attempt === 2 && fresh ? strongEtag(fresh) : fresh;
}

/**
 * GET then PATCH with the ETag of that read. The common case for resources whose ETag is in the
 * header or `@odata.etag`.
 */
export async function readThenPatch<T = unknown>(
  client: RedfishClient,
  path: string,
  body: unknown,
  opts: PatchOptions = {},
): Promise<RedfishResponse<T>> {
  const etag = opts.ifMatch === 'never' ? undefined : (opts.etag ?? (await currentEtag(client, path, opts)));
  return patchResource<T>(client, path, body, { ...opts, etag });
}

export interface ConfirmOptions {
  /** How long the read-back may take to agree. Default 10 s; 0 reads back once. */
  timeoutMs?: number;
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * A 2xx is not proof: reads the resource back until `agrees` holds. A write that answered
 * without a task is synchronous only if the first read-back agrees; otherwise the BMC gets until
 * the deadline, and then the write is reported as not applied (METAL_ERR_REDFISH_NOT_APPLIED),
 * naming what was expected, what was seen and the caller's whole timeout.
 */
export async function confirmWrite<T>(
  client: RedfishClient,
  what: string,
  read: () => Promise<T>,
  agrees: (value: T) => boolean,
  describe: (value: T) => string,
  opts: ConfirmOptions = {},
): Promise<{ value: T; synchronous: boolean }> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (let first = true; ; first = false) {
    const value = await read();
    if (agrees(value)) return { value, synchronous: first };
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new RedfishError(
        RedfishErrorCode.NotApplied,
        `${what}: the BMC accepted it but the read-back still shows ${describe(value)} after ${timeoutMs} ms`,
        { timeoutMs, seen: describe(value) },
      );
    }
    client.log.debug({ event: 'redfish.write.not_yet_visible', what }, 'read-back disagrees; waiting');
    await sleep(Math.min(opts.pollMs ?? 500, left), opts.signal);
  }
}

// Asynchronous operations: find the task monitor of a 202 answer, poll it (honouring
// Retry-After) until the task reaches a terminal state or the deadline passes.
import { sleep, type RedfishClient, type RedfishResponse } from './client.js';
import {
  RedfishError,
  RedfishErrorCode,
  isRedfishError,
  parseErrorBody,
  scrub,
  type RedfishMessage,
} from './errors.js';
import type { Task, TaskState } from './types.js';

export interface TaskHandle {
  /** Path to poll: a task monitor or the Task itself. */
  monitor: string;
}

export interface TaskResult {
  state: TaskState;
  /** `TaskStatus` (OK, Warning, Critical) when the BMC reports one. */
  status?: string;
  percent?: number;
  messages: RedfishMessage[];
  /** The last Task body seen, when the BMC returned one. */
  task?: Task;
}

export interface WaitOptions {
  /** Overall deadline of the wait, in ms. Required: no wait is unbounded. */
  timeoutMs: number;
  /** Poll interval when the BMC gives no Retry-After. Default 1 s. */
  pollMs?: number;
  /** Upper bound on a Retry-After the client honours. Default 30 s. */
  maxPollMs?: number;
  signal?: AbortSignal;
  onProgress?: (state: TaskState, percent: number | undefined) => void;
  /** Extra strings to scrub from task messages (e.g. image-server credentials). */
  secrets?: string[];
}

const TERMINAL: ReadonlySet<string> = new Set(['Completed', 'Exception', 'Killed', 'Cancelled']);
const FAILED: ReadonlySet<string> = new Set(['Exception', 'Killed', 'Cancelled']);
/** Dell/Lenovo JobState values and the TaskState they mean. */
const JOB_STATES: Record<string, TaskState> = {
  Completed: 'Completed',
  CompletedWithErrors: 'Exception',
  Failed: 'Exception',
  Exception: 'Exception',
  Cancelled: 'Cancelled',
  Scheduled: 'Pending',
  Scheduling: 'Pending',
  Running: 'Running',
  Starting: 'Starting',
  New: 'New',
  Pending: 'Pending',
};

export function isTerminal(state: string): boolean {
  return TERMINAL.has(state);
}

/**
 * The monitor of an accepted operation, in this order: `Location` header (generic, Dell), a
 * `TaskMonitor` field in the body (HPE), the body's own `@odata.id` when it is a Task (Lenovo).
 */
export function taskFromResponse(res: RedfishResponse): TaskHandle | undefined {
  if (res.location) return { monitor: res.location };
  const body = res.body as Task | undefined;
  if (!body || typeof body !== 'object') return undefined;
  if (typeof body.TaskMonitor === 'string') return { monitor: body.TaskMonitor };
  const isTask = typeof body.TaskState === 'string' || String(body['@odata.type'] ?? '').includes('Task');
  if (isTask && typeof body['@odata.id'] === 'string') return { monitor: body['@odata.id'] };
  return undefined;
}

function stateOf(task: Task): TaskState | undefined {
  if (task.TaskState) return task.TaskState;
  if (task.JobState) return JOB_STATES[task.JobState] ?? 'Running';
  return undefined;
}

function successEnvelope(body: unknown): boolean {
  if (!body || typeof body !== 'object' || !('error' in body)) return false;
  const parsed = parseErrorBody(JSON.stringify(body));
  return parsed.messages.some((m) => (m.MessageId ?? '').includes('Success'));
}

/** Lenovo: a Completed task that says "OperationTransitionedToJob" continues as that Job. */
function transitionedJob(task: Task): string | undefined {
  const msg = (task.Messages ?? []).find((m) => (m.MessageId ?? '').includes('OperationTransitionedToJob'));
  const arg = msg?.MessageArgs?.[0];
  return typeof arg === 'string' ? arg : undefined;
}

export interface Poll {
  done?: TaskResult;
  /** Still running: the state and progress the monitor reported. */
  running?: { state: TaskState; percent?: number };
  delayMs?: number;
  follow?: string;
  /** The monitor could not be reached this time (BMC restarting). */
  unreachable?: RedfishError;
}

const COMPLETED: Poll = { done: { state: 'Completed', messages: [] } };

async function fetchMonitor(
  client: RedfishClient,
  monitor: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<RedfishResponse<Task> | Poll> {
  try {
    return await client.request<Task>('GET', monitor, undefined, { timeoutMs, signal });
  } catch (e) {
    if (isRedfishError(e) && e.hasMessageId('Success')) return COMPLETED;
    throw e;
  }
}

/** Reads a monitor answer: 202 means running, a terminal Task (or no body) means done. */
export function interpretMonitor(res: RedfishResponse<Task>): Poll {
  const body = res.body;
  if (body === undefined) return res.status === 202 ? { delayMs: res.retryAfterMs } : COMPLETED;
  if (successEnvelope(body)) return COMPLETED;
  const state = stateOf(body) ?? (res.status === 202 ? 'Running' : 'Completed');
  if (state === 'Completed' && transitionedJob(body)) return { follow: transitionedJob(body) };
  if (res.status !== 202 && isTerminal(state)) {
    const messages = (body.Messages ?? []) as RedfishMessage[];
    const status = typeof body.TaskStatus === 'string' ? body.TaskStatus : undefined;
    return { done: { state, status, percent: body.PercentComplete, messages, task: body } };
  }
  const running = isTerminal(state) ? 'Running' : state;
  return { delayMs: res.retryAfterMs, running: { state: running, percent: body.PercentComplete } };
}

/** Longest single monitor request; a poll never outlives the caller's deadline either. */
const MONITOR_REQUEST_MS = 10_000;

async function pollOnce(
  client: RedfishClient,
  monitor: string,
  deadline: number,
  signal?: AbortSignal,
): Promise<Poll> {
  try {
    const budget = Math.max(1, Math.min(MONITOR_REQUEST_MS, deadline - Date.now()));
    const res = await fetchMonitor(client, monitor, budget, signal);
    return 'status' in res ? interpretMonitor(res) : res;
  } catch (e) {
    // A BMC restarting during a firmware update drops connections, times out or answers 503 for
    // a while; the wait's own deadline decides when that is too long (and says so, below).
    const down =
      isRedfishError(e, RedfishErrorCode.Connection) ||
      isRedfishError(e, RedfishErrorCode.Timeout) ||
      (isRedfishError(e) && (e.status ?? 0) === 503);
    if (!down) throw e;
    return { unreachable: e };
  }
}

function failure(result: TaskResult, monitor: string, secrets: string[]): RedfishError {
  const text = result.messages
    .map((m) => m.Message ?? m.MessageId)
    .filter(Boolean)
    .join('; ');
  const clean = scrub(text, secrets).slice(0, 300);
  return new RedfishError(
    RedfishErrorCode.TaskFailed,
    `task ${monitor} ended ${result.state}${clean ? `: ${clean}` : ''}`,
    {
      path: monitor,
      taskState: result.state,
      percent: result.percent,
      messageIds: result.messages.map((m) => m.MessageId ?? ''),
    },
  );
}

function taskTimeout(
  monitor: string,
  ms: number,
  last: { state: TaskState; percent?: number },
  unreachable?: RedfishError,
): RedfishError {
  const why = unreachable ? `; the monitor is unreachable: ${unreachable.message}` : '';
  return new RedfishError(
    RedfishErrorCode.Timeout,
    `task ${monitor} not finished after ${ms} ms (last state ${last.state}${last.percent === undefined ? '' : `, ${last.percent} %`})${why}`,
    { path: monitor, taskState: last.state, percent: last.percent, timeoutMs: ms },
    unreachable,
  );
}

/** Polls until a terminal state; resolves on Completed, throws TASK_FAILED or TIMEOUT otherwise. */
export async function waitForTask(
  client: RedfishClient,
  handle: TaskHandle,
  opts: WaitOptions,
): Promise<TaskResult> {
  const deadline = Date.now() + opts.timeoutMs;
  const pollMs = opts.pollMs ?? 1_000;
  const maxPollMs = opts.maxPollMs ?? 30_000;
  const secrets = [...client.secrets(), ...(opts.secrets ?? [])];
  let monitor = handle.monitor;
  let last: { state: TaskState; percent?: number } = { state: 'New' };
  for (;;) {
    const poll = await pollOnce(client, monitor, deadline, opts.signal);
    if (poll.follow) {
      monitor = client.resolve(poll.follow);
      continue;
    }
    if (poll.done) {
      if (FAILED.has(poll.done.state)) throw failure(poll.done, monitor, secrets);
      return poll.done;
    }
    const remaining = deadline - Date.now();
    // The caller's whole timeout is what the error reports, not what was left of the last poll.
    if (remaining <= 0) throw taskTimeout(monitor, opts.timeoutMs, last, poll.unreachable);
    const current = poll.running ?? last;
    if (current.state !== last.state || current.percent !== last.percent) {
      opts.onProgress?.(current.state, current.percent);
    }
    last = current;
    // Retry-After: 0 would mean a busy loop; treat it as "no hint".
    const hinted = poll.delayMs !== undefined && poll.delayMs > 0 ? poll.delayMs : pollMs;
    await sleep(Math.min(hinted, maxPollMs, remaining), opts.signal);
  }
}

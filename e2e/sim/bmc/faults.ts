// SIMULATOR fault injection: what can go wrong with a request to one simulated BMC.

export type FaultKind =
  /** Delay the answer by `ms`. */
  | 'latency'
  /** Answer `status` with a Redfish error body (or `body` as plain text); `echo` copies the request body in. */
  | 'status'
  /** Never answer; the socket stays open until the client gives up. */
  | 'hang'
  /** 200 with a body that is not JSON. */
  | 'malformed'
  /** Destroy the connection without an answer. */
  | 'reset'
  /** The next SimpleUpdate task never leaves Running. */
  | 'taskStuck'
  /** The next SimpleUpdate task ends in Exception. */
  | 'taskFail'
  /** A write (PATCH, InsertMedia, EjectMedia) answers 204 and changes nothing: a BMC that lies. */
  | 'ignore';

export interface FaultSpec {
  kind: FaultKind;
  /** Only requests with this method. */
  method?: string;
  /** Only requests whose path (after `/redfish/v1`) contains this. */
  path?: string;
  /** How many matching requests it affects; default unlimited. */
  times?: number;
  ms?: number;
  status?: number;
  body?: string;
  echo?: boolean;
}

export interface ActiveFault extends FaultSpec {
  id: number;
  remaining: number;
}

export type RequestFault = Exclude<FaultKind, 'taskStuck' | 'taskFail' | 'ignore'>;

const NOT_PER_REQUEST: ReadonlySet<FaultKind> = new Set(['taskStuck', 'taskFail', 'ignore']);

export class FaultSet {
  #faults: ActiveFault[] = [];
  #next = 1;

  add(spec: FaultSpec): number {
    const id = this.#next++;
    this.#faults.push({ ...spec, id, remaining: spec.times ?? Number.POSITIVE_INFINITY });
    return id;
  }

  clear(): void {
    this.#faults = [];
  }

  list(): ActiveFault[] {
    return this.#faults.map((f) => ({ ...f }));
  }

  /** Takes (and counts down) the first request fault matching this request. */
  take(method: string, path: string): ActiveFault | undefined {
    const fault = this.#faults.find(
      (f) =>
        !NOT_PER_REQUEST.has(f.kind) &&
        (!f.method || f.method === method) &&
        (!f.path || path.includes(f.path)),
    );
    if (fault) this.#consume(fault);
    return fault;
  }

  /** True (and counted down) when an `ignore` fault matches this write: the handler then fakes success. */
  takeIgnoredWrite(method: string, path: string): boolean {
    const fault = this.#faults.find(
      (f) => f.kind === 'ignore' && (!f.method || f.method === method) && (!f.path || path.includes(f.path)),
    );
    if (fault) this.#consume(fault);
    return fault !== undefined;
  }

  /** Takes a one-shot task fault, if any is armed. */
  takeTaskFault(): 'taskStuck' | 'taskFail' | undefined {
    const fault = this.#faults.find((f) => f.kind === 'taskStuck' || f.kind === 'taskFail');
    if (!fault) return undefined;
    this.#consume(fault);
    return fault.kind as 'taskStuck' | 'taskFail';
  }

  #consume(fault: ActiveFault): void {
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.#faults = this.#faults.filter((f) => f !== fault);
  }
}

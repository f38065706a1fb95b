// The InMaintenance attempt: the status write the webhook admits or denies, the cache's prediction of a
// budget's refusal (held back without asking), and what a refusal leaves: the waiting status and Event,
// the backoff, and the budget waiters a release wakes (admission-waits.ts, waiters.ts).
import type { Server } from '../../api/metal/v1alpha1/server.js';
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import type { ServerClaimDisruptionBudget } from '../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import type { Manager } from '../../lib/kube/manager.js';
import type { Informer } from '../../lib/kube/informer.js';
import type { ResourceClient } from '../../lib/kube/client.js';
import { errorMessage } from '../../lib/errors.js';
import { KubeApiError } from '../../lib/kube/errors.js';
import { MaintenanceConditions, qualified } from '../../contract/names.js';
import { DecisionLog } from '../../lib/log-sampling.js';
import { findCondition } from '../../contract/conditions.js';
import { Codes } from '../../contract/codes.js';
import { stateOf, uidOf } from '../../contract/lifecycle.js';
import { domainOf, serverUnavailableReason } from '../../contract/availability.js';
import { refKey, refOf, refOfKey, type BudgetRef } from '../../contract/budgets.js';
import { matchesSelector } from '../../contract/selectors.js';
import { GRANT_INDEX } from '../shared/budget-informers.js';
import { admissionDenial, type AdmissionDenial } from '../shared/denial.js';
import { withTypeMeta } from '../shared/writes.js';
import { BUDGET_DENIALS, passesOnWokenSlot, type WakeScope } from './waiters.js';
import { fullBudget, fullBudgetMessage, type FullBudget } from './hold-back.js';
import { GANG_INDEX, GANG_RECHECK_MS, gangIndexKey, gangNeed, gangReadiness } from './gang.js';
import type { AdmissionWaits } from './admission-waits.js';
import type { MaintenanceMetrics } from './metrics.js';
import type { PlanWriter } from './plan-writer.js';
import { deniedStatus } from './decide/queue.js';
import { failedAfterReservation, refusedAfterReservation } from './waiters.js';
import { statusChanged } from './decide/status.js';
import type { Attempt, ParkMode } from './decide/model.js';

/** When a maintenance held back for the first time looks again (no write, no admission review). */
const HELD_BACK_RECHECK_MS = 2_000;

const nameOf = (m: ServerMaintenance) => qualified(m.metadata.namespace, m.metadata.name);

export interface AdmitterDeps {
  mgr: Manager;
  options: { parkMode: ParkMode; maxBackoffMs: number };
  maintenances: Informer<ServerMaintenance>;
  servers: Informer<Server>;
  sdbs: Informer<ServerDisruptionBudget>;
  scdbs: Informer<ServerClaimDisruptionBudget>;
  smClient: ResourceClient<ServerMaintenance>;
  writer: PlanWriter;
  waits: AdmissionWaits;
  metrics: MaintenanceMetrics;
  enqueue: (server: string, urgent?: boolean) => void;
}

export class Admitter {
  readonly #d: AdmitterDeps;
  /** The decisions an operator looks for at info, sampled like the webhook's denials. */
  readonly #decisions: DecisionLog;

  constructor(deps: AdmitterDeps) {
    this.#d = deps;
    this.#decisions = new DecisionLog(deps.mgr.logger);
  }

  /**
   * Wakes up to `n` budget waiters in `scope`, in queue order: a release freed that many slots; a gang
   * is woken when its need fits the budget's `room` (budgetRoom), all of it.
   */
  wake(n: number, scope: WakeScope & { budget: string }, room?: number): void {
    if (n <= 0) return;
    for (const server of this.#d.waits.waiters.take(n, scope, room)) {
      for (const m of this.#d.maintenances.byIndex('server', server))
        this.#d.waits.woken(uidOf(m), scope.budget);
      this.#d.enqueue(server, true);
    }
    this.#d.metrics.budgetWaiters.set(this.#d.waits.waiters.size);
  }

  /** The server's topology domain in a budget (refKey): "" for claim budgets and those without a key. */
  #domainIn(budget: string, server: string): string {
    const ref = refOfKey(budget);
    const sdb = ref?.kind === 'ServerDisruptionBudget' ? this.#d.sdbs.getByName(ref.name) : undefined;
    const labelled = sdb?.spec.topologyKey ? this.#d.servers.getByName(server) : undefined;
    return labelled ? domainOf(labelled, sdb?.spec.topologyKey) : '';
  }

  /** Tries the InMaintenance transition; returns a requeue delay, or undefined to use the plan's. */
  async attempt(serverName: string, attempt: Attempt): Promise<{ ms: number; reason: string } | undefined> {
    const { m, status } = attempt;
    const gang = gangReadiness(
      m,
      m.spec.gang ? this.#d.maintenances.byIndex(GANG_INDEX, gangIndexKey(m)[0]!) : [],
    );
    if (!gang.ready) {
      // Not asked: the webhook would refuse GangIncomplete. The last member to get ready tries for all.
      this.#d.metrics.attempts.inc({ result: 'held-back' });
      await this.#recordDenial(attempt, 'GangIncomplete', gang.message);
      return { ms: GANG_RECHECK_MS, reason: 'gang-waiting' };
    }
    const need = gangNeed(gang.others);
    const full = this.#heldBackBy(serverName, uidOf(m), need);
    if (full) {
      this.#d.metrics.attempts.inc({ result: 'held-back' });
      const waits = await this.#denied(serverName, attempt, {
        code: full.paused ? Codes.BUDGET_PAUSED : Codes.BUDGET_EXHAUSTED,
        reason: full.paused ? 'BudgetPaused' : 'BudgetExhausted',
        message: fullBudgetMessage(full),
        retryAfterMs: undefined,
        budget: refKey({ kind: 'ServerDisruptionBudget', name: full.name }),
      });
      if (this.#d.waits.heldBack(uidOf(m)) !== 1) return waits;
      // The first hold-back looks again soon: our copy of the server may be behind the budget's count
      // (a server cordoned a moment ago already counts as unavailable there, and the webhook admits it).
      this.#d.waits.backOff(uidOf(m), Date.now() + HELD_BACK_RECHECK_MS);
      return { ms: HELD_BACK_RECHECK_MS, reason: waits.reason };
    }
    this.#d.waits.asked(uidOf(m));
    try {
      const written = await this.#d.writer.writeStatus({ m, status });
      if (!written) return undefined;
      this.#d.metrics.attempts.inc({ result: 'admitted' });
      this.#d.waits.forget(uidOf(m));
      this.#d.waits.waiters.remove(serverName);
      this.#d.metrics.budgetWaiters.set(this.#d.waits.waiters.size);
      if (attempt.enteredAt !== undefined)
        this.#d.metrics.timeInState.observe(
          { state: attempt.from },
          Math.max(0, (Date.now() - attempt.enteredAt) / 1000),
        );
      this.#d.mgr.events.normal(
        withTypeMeta(written, this.#d.smClient),
        'Started',
        'Start',
        `InMaintenance on server ${serverName} (approval: ${m.status?.approval?.source ?? 'NotRequired'})` +
          (this.#d.options.parkMode === 'annotation' ? '; asking metal-operator to park it' : ''),
      );
      this.#decisions.info(
        'Admitted',
        { server: serverName, maintenance: nameOf(m), approval: m.status?.approval?.source ?? 'NotRequired' },
        'maintenance admitted: InMaintenance',
      );
      // The gang's grants came with this one: its other members start now, not at their timers or a
      // backoff from an earlier refusal (waiting it out, their grants would reach the ledger TTL).
      for (const o of need) {
        this.#d.waits.forget(uidOf(o));
        this.#d.waits.waiters.remove(o.spec.serverRef.name);
        this.#d.enqueue(o.spec.serverRef.name, true);
      }
      // Look again at once: the taint value, park request and projection follow the new holder.
      return { ms: 0, reason: 'admitted' };
    } catch (e) {
      return this.#notWritten(serverName, attempt, e);
    }
  }

  /**
   * The InMaintenance write failed: a denial waits (see #denied); anything else goes up, to be retried
   * as any failure is. Either may have left a grant the eviction webhook wrote for it, released here.
   */
  async #notWritten(
    serverName: string,
    attempt: Attempt,
    e: unknown,
  ): Promise<{ ms: number; reason: string }> {
    const { m } = attempt;
    const denial = admissionDenial(e);
    if (!denial) {
      this.#d.metrics.attempts.inc({ result: 'error' });
      // Surely not stored, but the eviction webhook may have written its grant: give it back now, not
      // at the TTL (issue 31).
      if (e instanceof KubeApiError && failedAfterReservation(e))
        await this.#releaseUnused(serverName, m, 'failed').catch((err: unknown) =>
          this.#d.mgr.logger.warn(
            { server: serverName, maintenance: nameOf(m), err: errorMessage(err) },
            'could not release the grant of a failed InMaintenance write; the ledger TTL will',
          ),
        );
      throw e;
    }
    this.#d.metrics.attempts.inc({ result: 'denied' });
    if (refusedAfterReservation(denial.code)) await this.#releaseUnused(serverName, m, 'refused');
    return this.#denied(serverName, attempt, denial);
  }

  /**
   * The grants a refused InMaintenance write may have left (issue 31): another admission step refused
   * the write the eviction webhook had already reserved room for, in parallel. The maintenance is not
   * InMaintenance, so no grant of it is in use: its entries leave every fleet budget selecting the
   * server and every budget our cache shows holding one, now rather than at the ledger's TTL.
   */
  async #releaseUnused(serverName: string, m: ServerMaintenance, at: 'refused' | 'failed'): Promise<void> {
    // A gang member's grant came with its gang's: once a member runs, the others' grants are theirs to
    // use (dropping one would leave the gang holding part of a budget while it waits for room again);
    // a retry finds it held, and the ledger TTL ends it if the member never starts.
    const gang = m.spec.gang ? this.#d.maintenances.byIndex(GANG_INDEX, gangIndexKey(m)[0]!) : [];
    if (gang.some((o) => uidOf(o) !== uidOf(m) && stateOf(o) === 'InMaintenance')) return;
    const labels = this.#d.servers.getByName(serverName)?.metadata.labels;
    const refs = new Map<string, BudgetRef>();
    for (const b of this.#d.sdbs.list())
      if (matchesSelector(b.spec.serverSelector, labels)) refs.set(refKey(refOf(b)), refOf(b));
    for (const b of [
      ...this.#d.sdbs.byIndex(GRANT_INDEX, uidOf(m)),
      ...this.#d.scdbs.byIndex(GRANT_INDEX, uidOf(m)),
    ])
      refs.set(refKey(refOf(b)), refOf(b));
    await this.#d.writer.release(m, [...refs.values()], at);
  }

  /**
   * The full budget this attempt waits for without asking the webhook (see fullBudget), or undefined.
   * A server unavailable already is never held back (the webhook admits it without room), and after
   * HELD_BACK_MAX (admission-waits.ts) hold-backs in a row the webhook is asked anyway: a cache that is wrong in a way we
   * cannot see (a BMC outage this controller does not watch) delays a maintenance, it does not strand it.
   */
  #heldBackBy(serverName: string, uid: string, gang: readonly ServerMaintenance[]): FullBudget | undefined {
    const server = this.#d.servers.getByName(serverName);
    if (!server || serverUnavailableReason(server)) return undefined;
    // The whole gang's need: its members' servers, each counted in its own domain; one unavailable
    // already needs no room (as for the server tried).
    const members = gang.flatMap((o) => {
      const s = this.#d.servers.getByName(o.spec.serverRef.name);
      return s && serverUnavailableReason(s) ? [] : [{ labels: s?.metadata.labels, uid: uidOf(o) }];
    });
    const full = fullBudget(this.#d.sdbs.list(), server.metadata.labels, uid, members);
    if (!full) return undefined;
    return this.#d.waits.holdBack(uid) ? full : undefined;
  }

  /** A refusal (the webhook's, or the cache's prediction of it): the waiting status, backoff, waiters. */
  async #denied(
    serverName: string,
    attempt: Attempt,
    denial: Pick<AdmissionDenial, 'code' | 'reason' | 'message' | 'retryAfterMs' | 'budget'>,
  ): Promise<{ ms: number; reason: string }> {
    const { m } = attempt;
    this.#d.metrics.denied.inc({ reason: denial.reason });
    const budget = BUDGET_DENIALS.has(denial.reason);
    const wokenBy = this.#d.waits.wokenBy(uidOf(m));
    const delay = Math.min(this.#d.options.maxBackoffMs, this.#d.waits.waitAfterDenial(uidOf(m), denial));
    this.#d.waits.backOff(uidOf(m), Date.now() + delay);
    if (budget)
      this.#d.waits.waiters.add(
        serverName,
        m,
        denial.budget,
        denial.budget !== undefined ? this.#domainIn(denial.budget, serverName) : undefined,
      );
    // Woken for a slot it cannot use: the next waiter of that budget gets it, now rather than at its timer.
    if (wokenBy !== undefined && passesOnWokenSlot(wokenBy, denial))
      this.wake(1, { budget: wokenBy, domain: this.#domainIn(wokenBy, serverName) });
    this.#d.metrics.budgetWaiters.set(this.#d.waits.waiters.size);
    await this.#recordDenial(attempt, denial.reason, denial.message);
    this.#d.mgr.logger.debug(
      { server: serverName, maintenance: m.metadata.name, code: denial.code, delay },
      'InMaintenance denied',
    );
    return { ms: delay, reason: budget ? 'denied-budget' : 'denied' };
  }

  async #recordDenial(attempt: Attempt, reason: string, message: string): Promise<void> {
    const { m } = attempt;
    // The same refusal again keeps the condition as it is: its figures (in use, allowed) move with every
    // grant and release, and rewriting them was a status write per retry of every waiting maintenance.
    // The Event and the condition say since when and why; the figures are those of the first refusal.
    const current = findCondition(m.status?.conditions, MaintenanceConditions.Admitted);
    const repeated = current?.status === 'False' && current.reason === reason;
    const next = deniedStatus(attempt, reason, repeated ? current.message : message, new Date());
    if (!statusChanged(m, next)) return;
    try {
      await this.#d.writer.writeStatus({ m, status: next });
    } catch (e) {
      this.#d.mgr.logger.warn(
        { maintenance: m.metadata.name, err: errorMessage(e) },
        'could not record the denial',
      );
    }
    // An Event and an info line per transition, not per retry.
    if (repeated) return;
    this.#d.mgr.events.warning(withTypeMeta(m, this.#d.smClient), reason, 'Start', message);
    const waiting = BUDGET_DENIALS.has(reason) ? 'waiting for budget' : 'waiting to start';
    this.#decisions.info(
      reason,
      { maintenance: nameOf(m), reason, message },
      `maintenance ${waiting}: ${reason}`,
    );
  }
}

// A webhook server under test, built from the fixture world and in-memory stores (no network).
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { ServerDisruptionBudget } from '../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import { PolicyStore } from '../../lib/policy/store.js';
import { DEFAULT_POLICY } from '../../policies/schema.js';
import { MemoryBudgetStore } from '../../contract/testing/memory-budget-store.js';
import { type BudgetRef } from '../../contract/budgets.js';
import { MemoryWorld } from './memory-world.js';
import { createWebhookServer, type WebhookServerOptions } from '../server.js';
import { createGrantor } from '../grants/reserve.js';
import { loadWorld, NOW } from '../testdata/load.js';

export const FLEET: BudgetRef = { kind: 'ServerDisruptionBudget', name: 'fleet' };
/** The fleet budget allowing `max` unavailable. */
export const fleet = (max: number): ServerDisruptionBudget => ({
  metadata: { name: 'fleet', generation: 1 },
  spec: { serverSelector: {}, maxUnavailable: max },
  status: { observedGeneration: 1 },
});

/** A webhook server over the fixture world, a one-budget ledger, and its log lines captured. */
export function setup(over: Partial<WebhookServerOptions> & { budget?: number } = {}) {
  const world = loadWorld();
  // The world has three servers unavailable already (cordoned, Error, InMaintenance): 4 leaves one slot.
  world.serverBudgets = [fleet(over.budget ?? 4)];
  const store = new MemoryBudgetStore([{ ref: FLEET, budget: fleet(over.budget ?? 4) }]);
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  let ready = true;
  const server = createWebhookServer({
    world: new MemoryWorld(world),
    policies: new PolicyStore({ initial: DEFAULT_POLICY }),
    grant: createGrantor(store, { sleep: () => Promise.resolve() }),
    isReady: () => ready,
    clock: () => NOW,
    logger: pino({ name: 'webhook', level: 'debug' }, sink),
    registry: new Registry(),
    ...over,
  });
  return { ...server, store, lines, setReady: (r: boolean) => (ready = r) };
}

/** POST a JSON payload to the server under test. */
export const post = (app: ReturnType<typeof setup>['app'], url: string, payload: unknown) =>
  app.inject({
    method: 'POST',
    url,
    payload: payload as string,
    headers: { 'content-type': 'application/json' },
  });

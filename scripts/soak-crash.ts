// `npm run soak:crash`: crash consistency of the lifecycle controllers (issue 4, behaviour 10).
//
// On its own control plane (kube-apiserver + etcd as processes), with the webhook, the three lifecycle
// controllers as processes under their ServiceAccounts and the fleet simulator, it runs R rounds of a
// budget-paced rollout over N servers (a maintenance per server, some servers two) and kills random
// controllers with SIGKILL at random moments throughout. Each round must finish with no server stuck
// (tainted, parked or projected), no grant left, never more than K InMaintenance at once, never two on a
// server, and no grant of a maintenance that is not InMaintenance living longer than the grant TTL plus
// the longest time a killed controller stayed down (its successor takes the Lease and syncs first).
//
//   npm run soak:crash                    10 rounds, 100 servers, K=20
//   npm run soak:crash -- --rounds 3 --servers 40 --budget 5
//
// One line per round, then a summary; the last line is one JSON object. Exit status 1 on any violation.
import { parseArgs } from 'node:util';
import { KubeClient } from '../lib/kube/client.js';
import { controlPlaneUp, installCRDs, scratchControlPlaneDir } from '../e2e/harness/control-plane.js';
import { startLifecycle } from '../test/integration/lifecycle/harness.js';
import { CHAOS_POLICY, rollout, type RolloutResult } from '../test/integration/lifecycle/rollout.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    servers: { type: 'string', default: '100' },
    budget: { type: 'string', default: '20' },
    'hold-ms': { type: 'string', default: '1000' },
    'kill-every-ms': { type: 'string', default: '5000' },
    verbose: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const servers = Number(values.servers);
const budget = Number(values.budget);
const killEvery = Number(values['kill-every-ms']);
const TTL_MS = 15_000; // the lifecycle harness policy's grants.ttl

const { dir, teardown } = scratchControlPlaneDir('metal-soak-crash-');

const say = (line: string) => process.stdout.write(`${line}\n`);
const started = Date.now();
const cp = await controlPlaneUp(dir);
const bootstrap = await KubeClient.fromFile(cp.kubeconfig);
await installCRDs(bootstrap);
await bootstrap.close();
process.env.METAL_TEST_CP_DIR = dir;
say(
  `soak:crash: control plane up in ${Date.now() - started} ms; ${rounds} rounds of ${servers} servers, budget ${budget}`,
);

const lc = await startLifecycle({ actorHoldMs: Number(values['hold-ms']), policy: CHAOS_POLICY });
const results: RolloutResult[] = [];
try {
  for (let r = 1; r <= rounds; r++) {
    const result = await rollout(lc, `soak${r}`, {
      servers,
      budget,
      doubles: Math.floor(servers / 10),
      killEveryMs: [killEvery / 2, killEvery * 1.5],
      downMs: [0, 1500],
      ttlMs: TTL_MS,
      timeoutMs: 600_000,
      ...(values.verbose ? { log: say } : {}),
    });
    results.push(result);
    const kills = Object.entries(result.kills)
      .map(([c, n]) => `${c.replace('-controller', '')}=${n}`)
      .join(' ');
    say(
      `round ${r}: ${result.ok ? 'ok' : 'FAILED'} ${result.maintenances} maintenances in ${(result.durationMs / 1000).toFixed(1)} s; ` +
        `kills ${kills} (longest down ${(result.maxDowntimeMs / 1000).toFixed(1)} s); peak ${result.peakInMaintenance}/${budget}; ` +
        `longest idle grant ${(result.maxIdleGrantAgeMs / 1000).toFixed(1)} s` +
        (result.ok ? '' : `; ${result.problems.join('; ')}`),
    );
  }
} finally {
  await lc.stop();
}

const totalKills = results.reduce((n, r) => n + Object.values(r.kills).reduce((a, b) => a + b, 0), 0);
const summary = {
  ok: results.length === rounds && results.every((r) => r.ok),
  rounds: results.length,
  servers,
  budget,
  maintenances: results.reduce((n, r) => n + r.maintenances, 0),
  kills: totalKills,
  peak_in_maintenance: Math.max(0, ...results.map((r) => r.peakInMaintenance)),
  max_idle_grant_s: Number((Math.max(0, ...results.map((r) => r.maxIdleGrantAgeMs)) / 1000).toFixed(1)),
  max_controller_down_s: Number((Math.max(0, ...results.map((r) => r.maxDowntimeMs)) / 1000).toFixed(1)),
  grant_ttl_s: TTL_MS / 1000,
  stuck_servers: results.reduce((n, r) => n + r.stuckServers.length, 0),
  leftover_grants: results.reduce((n, r) => n + r.leftoverGrants, 0),
  round_seconds: results.map((r) => Number((r.durationMs / 1000).toFixed(1))),
  problems: results.flatMap((r, i) => r.problems.map((p) => `round ${i + 1}: ${p}`)),
};
say(
  `soak:crash: ${summary.ok ? 'passed' : 'FAILED'}: ${summary.rounds} rounds, ${summary.maintenances} maintenances, ` +
    `${summary.kills} kills, peak ${summary.peak_in_maintenance}/${budget}, longest idle grant ${summary.max_idle_grant_s} s (TTL ${summary.grant_ttl_s} s), ` +
    `${summary.stuck_servers} stuck servers, ${summary.leftover_grants} leftover grants, ${((Date.now() - started) / 1000).toFixed(0)} s`,
);
say(JSON.stringify(summary));
teardown();
process.exit(summary.ok ? 0 : 1);

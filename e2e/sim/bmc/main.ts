// SIMULATOR CLI: serve many simulated BMCs until SIGINT/SIGTERM.
//
//   tsx e2e/sim/bmc/main.ts --count 1000 --port 0 [--profile generic|mix|dell|…] [--ca-out FILE]
//                           [--servers N]   (N Systems spread over the --count BMCs, e.g. 1000 over 400)
//
// First stdout line: the URL. Second line: JSON with url, count, caFile, credentials, endpoints.
import { writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { SIM_PROFILES, type SimProfileName } from './profiles.js';
import { spread, startBmcSimulator } from './server.js';

const names = Object.keys(SIM_PROFILES) as SimProfileName[];

const program = new Command()
  .name('bmc-sim')
  .description('Simulated Redfish BMCs for tests (not a real BMC)')
  .option('--count <n>', 'number of BMCs', (v) => Number.parseInt(v, 10), 1000)
  .option('--port <n>', 'port on 127.0.0.1 (0: any free port)', (v) => Number.parseInt(v, 10), 0)
  .addOption(
    new Option('--profile <name>', 'vendor profile, or mix').choices([...names, 'mix']).default('generic'),
  )
  .option('--ca-out <file>', 'write the CA certificate (PEM) here')
  .option('--servers <n>', 'Systems in all, spread evenly over the BMCs (default one each)', (v) =>
    Number.parseInt(v, 10),
  )
  .option('--power-on-ms <n>', 'time of a power-on transition', (v) => Number.parseInt(v, 10))
  .option('--update-ms <n>', 'time of a SimpleUpdate task', (v) => Number.parseInt(v, 10))
  .option('--outage-ms <n>', 'BMC outage after Manager.Reset', (v) => Number.parseInt(v, 10));

const opts = program.parse().opts<{
  count: number;
  port: number;
  profile: SimProfileName | 'mix';
  caOut?: string;
  servers?: number;
  powerOnMs?: number;
  updateMs?: number;
  outageMs?: number;
}>();

const profile =
  opts.profile === 'mix' ? (i: number): SimProfileName => names[i % names.length]! : opts.profile;
const timing = Object.fromEntries(
  Object.entries({
    powerOnMs: opts.powerOnMs,
    updateMs: opts.updateMs,
    managerResetOutageMs: opts.outageMs,
  }).filter(([, v]) => v !== undefined),
);
const systems = opts.servers === undefined ? undefined : spread(opts.servers, opts.count);
const sim = await startBmcSimulator({ count: opts.count, port: opts.port, profile, timing, systems });
if (opts.caOut) writeFileSync(opts.caOut, sim.ca);
process.stdout.write(`${sim.url}\n`);
process.stdout.write(
  JSON.stringify({
    url: sim.url,
    count: sim.count,
    servers: sim.servers().map((x) => `${x.bmc}/${x.system}`),
    caFile: opts.caOut ?? null,
    ca: opts.caOut ? undefined : sim.ca,
    credentials: sim.credentials,
    endpoint: `${sim.url}/bmc/<n>`,
    control: `${sim.url}/sim`,
  }) + '\n',
);
const stop = (): void => {
  void sim.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

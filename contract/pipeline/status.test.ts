// What a run writes is what a restarted controller reads back, at every step of whole runs, and it
// is a valid MaintenancePipelineRun status.
import { MaintenancePipelineRunKind } from '../../api/maintenance/v1alpha1/maintenancepipelinerun.js';
import { formatFieldErrors, validateObject } from '../../api/schema/validate.js';
import { cellKey } from './stages.js';
import { childName, recordedFromStatus, statusStages } from './status.js';
import { RunSim } from './testing/run-sim.js';
import { BIOS_FIRST_STAGES, IEP_STAGES, OLD_VERSIONS, SERVERS } from './testing/fixtures.js';

describe('run status', () => {
  it.each([
    ['IEP', IEP_STAGES],
    ['BIOS first', BIOS_FIRST_STAGES],
  ])(
    'round-trips the planner cells at every step of a %s run, with a failure and a reached hop',
    (_n, stages) => {
      const sim = new RunSim(stages, SERVERS, { ...OLD_VERSIONS, bmc: 'iLO 6 v1.70' });
      sim.failNext.add(cellKey(stages.at(-1)!.name, 'server-b'));
      sim.runToEnd();
      expect(sim.history.length).toBeGreaterThan(5);
      for (const plan of sim.history) {
        const { stages: written, counters } = statusStages('run-1', stages, SERVERS, plan);
        expect(recordedFromStatus(stages, written)).toEqual(plan.cells);
        expect(counters.totalStages).toBe(stages.length);
        const run = {
          apiVersion: MaintenancePipelineRunKind.apiVersion,
          kind: 'MaintenancePipelineRun',
          metadata: { name: 'run-1' },
          spec: {
            pipelineRef: { name: 'p' },
            bmcRef: { name: 'bmc-1' },
            serverRefs: SERVERS.map((name) => ({ name })),
          },
          status: { stages: written, ...counters },
        };
        const result = validateObject(MaintenancePipelineRunKind, run);
        expect(result.ok ? 'valid' : formatFieldErrors(result.errors)).toBe('valid');
      }
    },
  );

  it('names children after the run, the server and the stage, within 63 characters', () => {
    expect(childName('ilo6-bmc-1', 'bmc-fw-v180')).toBe('ilo6-bmc-1-bmc-fw-v180');
    expect(childName('ilo6-bmc-1', 'bios-fw', 'server-a')).toBe('ilo6-bmc-1-server-a-bios-fw');
    expect(childName('r'.repeat(60), 'bios-fw', 'server-a').length).toBeLessThanOrEqual(63);
  });
});

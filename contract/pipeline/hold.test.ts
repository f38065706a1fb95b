import type { MaintenancePipelineSpec } from '../../api/maintenance/v1alpha1/maintenancepipeline.js';
import { PIPELINE_TAINT_KEY } from '../names.js';
import { approvalRequired, planHolds, runMaintenanceSpec, runTaint, UPSTREAM_TAINT_EFFECT } from './hold.js';
import { IEP_STAGES } from './testing/fixtures.js';

const spec = (over: Partial<MaintenancePipelineSpec> = {}): MaintenancePipelineSpec => ({
  serverSelector: {},
  stages: IEP_STAGES,
  ...over,
});

describe('the run taint', () => {
  it('maps NoClaim onto NoBind and Evict onto Evict, NoClaim by default', () => {
    expect(UPSTREAM_TAINT_EFFECT).toEqual({ NoClaim: 'NoBind', Evict: 'Evict' });
    expect(runTaint(spec(), 'run-1')).toEqual({ key: PIPELINE_TAINT_KEY, value: 'run-1', effect: 'NoBind' });
    expect(runTaint(spec({ maintenanceTaintEffect: 'Evict' }), 'run-1').effect).toBe('Evict');
  });
});

describe('the run maintenance', () => {
  it('asks the tenant once when any stage asks, or when the taint evicts', () => {
    const owner = structuredClone(IEP_STAGES);
    owner[2]!.template.serverMaintenancePolicy = 'OwnerApproval';
    expect(approvalRequired(spec({ stages: owner }))).toBe(true);
    expect(approvalRequired(spec({ maintenanceTaintEffect: 'Evict' }))).toBe(true);
    const enforced = IEP_STAGES.map((s) => ({
      ...s,
      template: { ...s.template, serverMaintenancePolicy: 'Enforced' as const },
    }));
    expect(approvalRequired(spec({ stages: enforced }))).toBe(false);
    expect(approvalRequired(spec())).toBeUndefined();
  });

  it('is a firmware update when a stage flashes, names the pipeline and its stages', () => {
    const m = runMaintenanceSpec('ilo6', spec(), 'server-a');
    expect(m).toMatchObject({ serverRef: { name: 'server-a' }, reason: 'FirmwareUpdate' });
    expect(m.description).toContain('MaintenancePipeline ilo6: 7 stage(s), bmc-baseline');
    expect(m.approval).toBeUndefined();
    const settingsOnly = spec({ stages: IEP_STAGES.filter((s) => s.kind.endsWith('Settings')) });
    expect(runMaintenanceSpec('p', settingsOnly, 's').reason).toBe('SettingsChange');
  });

  it('makes the run one gang when a stage acts on the BMC, and none when every stage is per server', () => {
    const gang = { name: 'run-uid', size: 4 };
    expect(runMaintenanceSpec('ilo6', spec(), 'server-a', gang).gang).toEqual(gang);
    const serverOnly = spec({ stages: IEP_STAGES.filter((s) => s.kind.startsWith('BIOS')) });
    expect(runMaintenanceSpec('p', serverOnly, 's', gang).gang).toBeUndefined();
  });
});

describe('planHolds', () => {
  it('takes one maintenance and the taint per needed server, and gives both back after', () => {
    const views = [
      { server: 'a', taken: false, tainted: false },
      { server: 'b', taken: true, state: 'InMaintenance', tainted: true },
      { server: 'c', taken: true, state: 'Completed', tainted: true },
    ];
    expect(planHolds(views, new Set(['a', 'b']))).toEqual({
      take: ['a'],
      taint: ['a'],
      release: ['c'],
      untaint: ['c'],
      lost: [],
    });
  });

  it('never takes a second maintenance in one hold: one that ended early is lost', () => {
    const views = [{ server: 'a', taken: true, state: 'Failed', tainted: true }];
    expect(planHolds(views, new Set(['a']))).toMatchObject({ take: [], lost: ['a'] });
    expect(planHolds([{ server: 'a', taken: true, tainted: true }], new Set(['a'])).lost).toEqual(['a']);
  });
});

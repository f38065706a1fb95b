// Pipelines the planner's tests run, as data: the IEP-0016 example (two BMC hops between BMC settings,
// BIOS settings around a BIOS hop) and a BIOS-first one with a BMC stage in the middle.
import type { PipelineStage } from '../../../api/maintenance/v1alpha1/maintenancepipeline.js';

const image = (uri: string) => ({ URI: `http://firmware-repo.internal/${uri}` });
const flow = (name: string, settings: Record<string, string>) => [{ name, priority: 1, settings }];

export const IEP_STAGES: PipelineStage[] = [
  {
    name: 'bmc-baseline',
    kind: 'BMCSettings',
    template: { settingsFlow: flow('net', { SyslogServer: '10.0.0.5' }) },
  },
  {
    name: 'bmc-fw-v160',
    kind: 'BMCVersion',
    template: { version: 'iLO 6 v1.60', image: image('ilo6_160.bin') },
  },
  {
    name: 'bmc-fw-v180',
    kind: 'BMCVersion',
    template: { version: 'iLO 6 v1.80', image: image('ilo6_180.bin') },
  },
  {
    name: 'bmc-post-upgrade',
    kind: 'BMCSettings',
    template: { settingsFlow: flow('tune', { ProcTurbo: 'Enabled' }) },
  },
  {
    name: 'bios-pre-upgrade',
    kind: 'BIOSSettings',
    template: { settingsFlow: flow('pxe', { Pxe: 'Enabled' }) },
  },
  {
    name: 'bios-fw-v250',
    kind: 'BIOSVersion',
    template: { version: 'U54 v2.50', image: image('bios_v250.bin') },
  },
  {
    name: 'bios-post-upgrade',
    kind: 'BIOSSettings',
    template: { version: 'U54 v2.50', settingsFlow: flow('perf', { ProcHyperthreading: 'Enabled' }) },
  },
];

export const BIOS_FIRST_STAGES: PipelineStage[] = [
  {
    name: 'bios-fw-v240',
    kind: 'BIOSVersion',
    template: { version: 'U54 v2.40', image: image('bios_v240.bin') },
  },
  {
    name: 'bmc-fw-v180',
    kind: 'BMCVersion',
    template: { version: 'iLO 6 v1.80', image: image('ilo6_180.bin') },
  },
  {
    name: 'bios-fw-v250',
    kind: 'BIOSVersion',
    template: { version: 'U54 v2.50', image: image('bios_v250.bin') },
  },
];

export const SERVERS = ['server-a', 'server-b', 'server-c'];
export const OLD_VERSIONS = { bmc: 'iLO 6 v1.50', bios: 'U54 v2.10' };

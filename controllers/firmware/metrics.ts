// Metrics of the firmware controller: objects by kind and state, results, maintenances requested
// and Redfish errors by code and operation. Registered on the Manager's registry (/metrics).
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FirmwareKindName, FirmwareObject } from './model.js';

const STATES = ['Pending', 'InProgress', 'Completed', 'Applied', 'Failed'];

export class FirmwareMetrics {
  readonly objects: Gauge<'kind' | 'state'>;
  readonly results: Counter<'kind' | 'result'>;
  readonly maintenancesRequested: Counter;
  readonly redfishErrors: Counter<'code' | 'operation'>;

  constructor(registry: Registry, list: () => { kind: FirmwareKindName; obj: FirmwareObject }[]) {
    const registers = [registry];
    this.objects = new Gauge({
      name: 'metal_firmware_objects',
      help: 'BIOS/BMC version and settings objects by kind and state.',
      labelNames: ['kind', 'state'],
      registers,
      collect() {
        this.reset();
        for (const kind of ['BIOSVersion', 'BMCVersion', 'BIOSSettings', 'BMCSettings'])
          for (const state of STATES) this.set({ kind, state }, 0);
        for (const { kind, obj } of list()) this.inc({ kind, state: obj.status?.state ?? 'Pending' });
      },
    });
    this.results = new Counter({
      name: 'metal_firmware_results_total',
      help: 'Firmware objects that settled, by kind and result (Completed, Applied, Failed).',
      labelNames: ['kind', 'result'],
      registers,
    });
    this.maintenancesRequested = new Counter({
      name: 'metal_firmware_maintenances_requested_total',
      help: 'ServerMaintenances the firmware controller created.',
      registers,
    });
    this.redfishErrors = new Counter({
      name: 'metal_firmware_redfish_errors_total',
      help: 'Redfish failures of the firmware controller, by code and operation.',
      labelNames: ['code', 'operation'],
      registers,
    });
  }

  transition(kind: FirmwareKindName, before: string | undefined, after: string | undefined): void {
    if (after === before || !after || after === 'InProgress' || after === 'Pending') return;
    this.results.inc({ kind, result: after });
  }
}

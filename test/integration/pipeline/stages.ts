// The three stages both pipeline e2e files run: a BMC flash (once per BMC), a BIOS setting and a BIOS
// flash (once per server), in that order.
export const STAGES = [
  {
    name: 'bmc-fw',
    kind: 'BMCVersion' as const,
    template: {
      version: '6.0.0',
      serverMaintenancePolicy: 'Enforced' as const,
      image: { URI: 'https://images.test/bmc/6.0.0' },
    },
  },
  {
    name: 'bios-tune',
    kind: 'BIOSSettings' as const,
    template: {
      version: '1.0.0',
      serverMaintenancePolicy: 'Enforced' as const,
      settingsFlow: [{ name: 'virt', priority: 10, settings: { SriovGlobalEnable: 'Enabled' } }],
    },
  },
  {
    name: 'bios-fw',
    kind: 'BIOSVersion' as const,
    template: {
      version: '2.1.0',
      serverMaintenancePolicy: 'Enforced' as const,
      image: { URI: 'https://images.test/bios/2.1.0' },
    },
  },
];

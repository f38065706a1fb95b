import type { ServerLedger } from '../../e2e/sim/bmc/ledger.js';
import { countApplies } from './ledger.js';

function row(bmc: number, system: string, bios: [number, number], bmcCounts: [number, number]): ServerLedger {
  return {
    bmc,
    system,
    biosVersion: '2.0.0',
    bmcVersion: '6.0.0',
    biosUpdatesStarted: bios[0],
    biosFlashes: bios[1],
    biosSettingsWrites: 0,
    biosSettingsApplied: 0,
    biosSettingsDiscards: 0,
    resets: 1,
    bmcReboots: 0,
    bmcLedger: {
      bmcUpdatesStarted: bmcCounts[0],
      bmcFlashes: bmcCounts[1],
      bmcSettingsWrites: 0,
      bmcSettingsDiscards: 0,
      managerResets: 1,
    },
  };
}

describe('countApplies', () => {
  test('one update per server and per BMC: none doubled, none missed; a BMC counts once for its servers', () => {
    const ledger = [row(0, 'a', [1, 1], [1, 1]), row(0, 'b', [1, 1], [1, 1]), row(1, 'a', [1, 1], [1, 1])];
    expect(countApplies(ledger, { bios: true, bmc: true })).toEqual({
      doubleApplies: 0,
      missed: 0,
      biosFlashes: 3,
      bmcFlashes: 2,
    });
  });

  test('a second task or a second flash is a double apply; no flash is a miss', () => {
    const ledger = [
      row(0, 'a', [2, 1], [1, 1]), // task posted twice
      row(0, 'b', [1, 1], [1, 1]),
      row(1, 'a', [1, 2], [1, 2]), // BIOS and BMC flashed twice
      row(2, 'a', [0, 0], [0, 0]), // never reached
    ];
    expect(countApplies(ledger, { bios: true, bmc: true })).toMatchObject({ doubleApplies: 3, missed: 2 });
  });

  test('a rollout that did not run is not judged', () => {
    const ledger = [row(0, 'a', [1, 1], [0, 0])];
    expect(countApplies(ledger, { bios: true, bmc: false })).toMatchObject({ doubleApplies: 0, missed: 0 });
  });
});

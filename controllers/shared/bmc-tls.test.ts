import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bmcTls } from './bmc-tls.js';

function recorder() {
  const warnings: unknown[][] = [];
  return { warnings, logger: { warn: (...args: unknown[]) => void warnings.push(args) } };
}

describe('bmcTls', () => {
  it('verifies against the bundle when the file is there', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'bmc-ca-')), 'ca.crt');
    writeFileSync(file, 'PEM');
    const { warnings, logger } = recorder();
    expect(bmcTls({ bmcCaFile: file }, logger)).toEqual({ ca: Buffer.from('PEM') });
    expect(warnings).toEqual([]);
  });

  it('refuses https BMCs, naming the missing file, when the optional ConfigMap is not mounted', () => {
    const { warnings, logger } = recorder();
    const tls = bmcTls({ bmcCaFile: '/nonexistent/bmc-ca/ca.crt' }, logger);
    expect(tls).toEqual({ insecure: false });
    expect(warnings).toEqual([
      [{ bmcCaFile: '/nonexistent/bmc-ca/ca.crt' }, expect.stringContaining('metal-maintenance-bmc-ca')],
    ]);
  });

  it('skips verification only when asked, and warns when neither is given', () => {
    const asked = recorder();
    expect(bmcTls({ bmcInsecureSkipTlsVerify: true }, asked.logger)).toEqual({ insecure: true });
    expect(asked.warnings).toEqual([]);
    const neither = recorder();
    expect(bmcTls({}, neither.logger)).toEqual({ insecure: false });
    expect(neither.warnings).toHaveLength(1);
  });
});

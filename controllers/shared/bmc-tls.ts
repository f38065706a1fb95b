// The BMC TLS policy of the controllers that talk Redfish (boot, firmware), from their flags. The
// shipped Deployments mount the ConfigMap metal-maintenance-bmc-ca as optional, so until an operator
// creates it the --bmc-ca-file is absent: the controller then runs refusing https BMCs, and says so,
// rather than crash-looping (it reads the bundle at start; restart it once the ConfigMap exists).
import { existsSync, readFileSync } from 'node:fs';
import type { TlsOptions } from '../../lib/redfish/index.js';

export interface BmcTlsFlags {
  bmcCaFile?: string;
  bmcInsecureSkipTlsVerify?: boolean;
}

interface Warn {
  warn: (obj: object | string, msg?: string) => void;
}

export function bmcTls(flags: BmcTlsFlags, logger: Warn): TlsOptions {
  const caFile = flags.bmcCaFile && existsSync(flags.bmcCaFile) ? flags.bmcCaFile : undefined;
  if (caFile) return { ca: readFileSync(caFile) };
  if (flags.bmcCaFile) {
    logger.warn(
      { bmcCaFile: flags.bmcCaFile },
      '--bmc-ca-file does not exist (is the ConfigMap metal-maintenance-bmc-ca created?): https BMCs will be refused',
    );
  } else if (!flags.bmcInsecureSkipTlsVerify) {
    logger.warn('neither --bmc-ca-file nor --bmc-insecure-skip-tls-verify: https BMCs will be refused');
  }
  return { insecure: flags.bmcInsecureSkipTlsVerify === true };
}

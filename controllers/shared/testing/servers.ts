// Test fixtures shared by the controllers' fakes: a Server as metal-operator leaves it, behind a BMC.
import type { Server } from '../../../api/metal/v1alpha1/server.js';

/** Server `name` behind BMC `bmc` (uid `uid-<name>`), with nothing else set. */
export function serverBehindBmc(name: string, bmc = 'bmc-1'): Server {
  return {
    apiVersion: 'metal.ironcore.dev/v1alpha1',
    kind: 'Server',
    metadata: { name, uid: `uid-${name}` },
    spec: { bmcRef: { name: bmc } },
  } as Server;
}

// `tsx e2e/harness/up.ts DIR`: starts a control plane in DIR and installs our CRDs. Jest's global
// setup runs this as a child process (its setup hook cannot load ESM TypeScript); scripts/demo.sh
// uses it too.
import { controlPlaneUp, installCRDs } from './control-plane.js';
import { KubeClient } from '../../lib/kube/client.js';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: tsx e2e/harness/up.ts DIR');
  process.exit(2);
}
const started = Date.now();
const cp = await controlPlaneUp(dir);
const client = await KubeClient.fromFile(cp.kubeconfig);
try {
  const crds = await installCRDs(client);
  console.error(
    `[harness] control plane ready with ${crds.length} CRDs in ${Date.now() - started} ms (${dir})`,
  );
} finally {
  await client.close();
}

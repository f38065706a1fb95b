// One reconcile step of a firmware object, with the I/O behind two ports: ask the decision, take
// the one observation it asks for, ask again, run its actions in order. The first failed action
// turns into onActionError's decision; the status returned is what the caller writes. The
// reconciler runs it against Kubernetes and Redfish, the tests against fakes.
import type { ServerMaintenance } from '../../api/maintenance/v1alpha1/servermaintenance.js';
import { errorMessage, isMetalError } from '../../lib/errors.js';
import { scrub } from '../../lib/redfish/index.js';
import { decide, onActionError } from './decide.js';
import type {
  Decision,
  ErrorView,
  FirmwareAction,
  FirmwareContext,
  FirmwareKindName,
  FirmwareObject,
  FirmwareWorld,
} from './model.js';
import type { FirmwarePort } from './port.js';

export interface KubeOps {
  createMaintenance(m: ServerMaintenance): Promise<void>;
  deleteMaintenance(namespace: string, name: string, uid?: string): Promise<void>;
  setRefs(
    kind: FirmwareKindName,
    obj: FirmwareObject,
    attempt: number,
    refs: { namespace: string; name: string }[],
  ): Promise<void>;
  clearOperation(kind: FirmwareKindName, obj: FirmwareObject): Promise<void>;
  /** Username and password of an image Secret; undefined when no Secret is named. */
  imageCredentials(
    ref: { name?: string; namespace?: string } | undefined,
  ): Promise<{ username: string; password: string } | undefined>;
}

export type ActDecision = Extract<Decision, { kind: 'act' }>;

/** A coded, credential-free view of any error. */
export function errorView(e: unknown, secrets: readonly string[] = []): ErrorView {
  const code = isMetalError(e)
    ? e.code
    : typeof (e as { code?: unknown })?.code === 'string'
      ? String((e as { code: string }).code)
      : 'METAL_ERR_UNKNOWN';
  const text = e instanceof Error ? e.message : errorMessage(e);
  return { code, message: scrub(`${code}: ${text}`, secrets).slice(0, 1024) };
}

async function run(
  kind: FirmwareKindName,
  obj: FirmwareObject,
  world: FirmwareWorld,
  action: FirmwareAction,
  port: FirmwarePort,
  kube: KubeOps,
): Promise<string | undefined> {
  switch (action.kind) {
    case 'createMaintenance':
      return void (await kube.createMaintenance(action.maintenance));
    case 'deleteMaintenance':
      return void (await kube.deleteMaintenance(action.namespace, action.name, action.uid));
    case 'setRefs':
      return void (await kube.setRefs(kind, obj, action.attempt, action.refs));
    case 'clearOperation':
      return void (await kube.clearOperation(kind, obj));
  }
  if (!world.access.ok) throw new Error(`no BMC access: ${world.access.message}`);
  const access = world.access.access;
  switch (action.kind) {
    case 'simpleUpdate': {
      const creds = await kube.imageCredentials(action.image.secretRef);
      return (await port.simpleUpdate(access, action.target, action.image, creds)).taskUri;
    }
    case 'reset':
      return void (await port.reset(access, action.target));
    case 'writeAttributes':
      return void (await port.writeAttributes(access, action.target, action.attributes));
    case 'discardStaged':
      return void (await port.discardStaged(access, action.target, action.attributes));
  }
}

export async function step(
  kind: FirmwareKindName,
  obj: FirmwareObject,
  world: FirmwareWorld,
  ctx: FirmwareContext,
  port: FirmwarePort,
  kube: KubeOps,
): Promise<ActDecision> {
  let decision = decide(kind, obj, world, ctx);
  if (decision.kind === 'observe') {
    if (!world.access.ok) throw new Error('the decision asked to observe a BMC it cannot reach');
    const secrets = [world.access.access.credentials.password];
    try {
      world.bmc = { ok: true, observation: await port.observe(world.access.access, decision.request) };
    } catch (e) {
      world.bmc = { ok: false, error: errorView(e, secrets) };
    }
    decision = decide(kind, obj, world, ctx);
  }
  if (decision.kind === 'observe') throw new Error('the firmware decision asked for a second observation');
  for (const action of decision.actions) {
    try {
      const taskUri = await run(kind, obj, world, action, port, kube);
      if (action.kind === 'simpleUpdate' && decision.status?.upgradeTask)
        decision.status.upgradeTask = { ...decision.status.upgradeTask, URI: taskUri };
    } catch (e) {
      const secrets = world.access.ok ? [world.access.access.credentials.password] : [];
      return onActionError(kind, obj, world, action, errorView(e, secrets), ctx) as ActDecision;
    }
  }
  return decision;
}

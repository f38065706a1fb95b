// What the webhook integration tests share: the identities that write (controllers' ServiceAccounts,
// a tenant ServiceAccount with namespaced RBAC, admin), object builders, and assertions on denials.
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { serviceAccountKubeconfig, uniqueName, waitFor, type PolicyRule } from '../../../e2e/harness/env.js';
import { SYSTEM_NAMESPACE, tokenKubeconfig } from '../../../e2e/harness/processes.js';
import { MAINTENANCE_CONTROLLER_RULES } from '../../../e2e/harness/budget-contention.js';
import {
  ServerMaintenanceKind,
  type ServerMaintenance,
} from '../../../api/maintenance/v1alpha1/servermaintenance.js';
import {
  ServerDisruptionBudgetKind,
  type ServerDisruptionBudget,
} from '../../../api/maintenance/v1alpha1/serverdisruptionbudget.js';
import {
  ServerClaimDisruptionBudgetKind,
  type ServerClaimDisruptionBudget,
} from '../../../api/maintenance/v1alpha1/serverclaimdisruptionbudget.js';
import { ServerKind, type Server } from '../../../api/metal/v1alpha1/server.js';
import { ServerClaimKind, type ServerClaim } from '../../../api/metal/v1alpha1/serverclaim.js';
import { KubeClient, type ResourceClient } from '../../../lib/kube/client.js';
import { KubeApiError } from '../../../lib/kube/errors.js';
import { errorMessage } from '../../../lib/errors.js';
import { Core, resourceOf } from '../../../lib/kube/resources.js';

export const servers = (c: KubeClient) => c.resource<Server>(resourceOf(ServerKind));
export const claims = (c: KubeClient) => c.resource<ServerClaim>(resourceOf(ServerClaimKind));
export const maintenances = (c: KubeClient) =>
  c.resource<ServerMaintenance>(resourceOf(ServerMaintenanceKind));
export const fleetBudgets = (c: KubeClient) =>
  c.resource<ServerDisruptionBudget>(resourceOf(ServerDisruptionBudgetKind));
export const tenantBudgets = (c: KubeClient) =>
  c.resource<ServerClaimDisruptionBudget>(resourceOf(ServerClaimDisruptionBudgetKind));

const METAL = 'metal.ironcore.dev';
const MAINT = 'maintenance.metal.ironcore.dev';

/** What each controller's manifests grant it, as far as these tests write. */
export const CONTROLLER_RULES: Record<'maintenance-controller' | 'approval-controller', PolicyRule[]> = {
  'maintenance-controller': MAINTENANCE_CONTROLLER_RULES,
  'approval-controller': [
    { apiGroups: [METAL], resources: ['serverclaims'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [METAL], resources: ['serverclaims/status'], verbs: ['get', 'update', 'patch'] },
    { apiGroups: [MAINT], resources: ['servermaintenances'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [MAINT], resources: ['servermaintenances/status'], verbs: ['get', 'update', 'patch'] },
  ],
};

export interface Identity {
  client: KubeClient;
  kubeconfig: string;
  username: string;
}

async function identity(kc: { kubeconfig: string; username: string }): Promise<Identity> {
  return { ...kc, client: await KubeClient.fromFile(kc.kubeconfig) };
}

/** A controller's ServiceAccount in metal-maintenance-system (the names the policy's writers list). */
export async function controllerIdentity(
  admin: KubeClient,
  name: keyof typeof CONTROLLER_RULES,
): Promise<Identity> {
  return identity(await serviceAccountKubeconfig(admin, SYSTEM_NAMESPACE, name, CONTROLLER_RULES[name]));
}

/**
 * Some other automation in metal-maintenance-system with the approval controller's rights: its writes
 * reach the webhook (only the controllers' own are admitted without a call), so the policy decides.
 */
export async function otherWriterIdentity(admin: KubeClient, name = 'ops-automation'): Promise<Identity> {
  return identity(
    await serviceAccountKubeconfig(admin, SYSTEM_NAMESPACE, name, CONTROLLER_RULES['approval-controller']),
  );
}

/**
 * A tenant: a ServiceAccount in its namespace with a namespaced Role over claims (status included, so
 * that the webhook, not RBAC, is what refuses announcement writes) and read access to maintenances.
 */
export async function tenantIdentity(admin: KubeClient, namespace: string): Promise<Identity> {
  return namespacedIdentity(admin, namespace, 'tenant', [
    {
      apiGroups: [METAL],
      resources: ['serverclaims'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    { apiGroups: [METAL], resources: ['serverclaims/status'], verbs: ['get', 'update', 'patch'] },
    {
      apiGroups: [MAINT],
      resources: ['servermaintenances', 'serverclaimdisruptionbudgets'],
      verbs: ['get', 'list', 'watch'],
    },
  ]);
}

/**
 * Somebody who may create ServerMaintenances in `namespace` (RBAC, namespaced) and read claims there:
 * what RBAC alone lets request maintenance. Which servers it may name is the webhook's to decide.
 */
export async function requesterIdentity(
  admin: KubeClient,
  namespace: string,
  name: string,
): Promise<Identity> {
  return namespacedIdentity(admin, namespace, name, [
    { apiGroups: [METAL], resources: ['serverclaims'], verbs: ['get', 'list', 'watch'] },
    {
      apiGroups: [MAINT],
      resources: ['servermaintenances'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
  ]);
}

/** A ServiceAccount with a Role of `rules` in its namespace, and a kubeconfig with a real token. */
async function namespacedIdentity(
  admin: KubeClient,
  namespace: string,
  name: string,
  rules: PolicyRule[],
): Promise<Identity> {
  await admin.resource(Core.ServiceAccount).create({ metadata: { name, namespace } });
  await admin.resource(Core.Role).create({ metadata: { name, namespace }, rules } as never);
  await admin.resource(Core.RoleBinding).create({
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  } as never);
  return identity(await tokenKubeconfig(admin, namespace, name));
}

// ------------------------------------------------------------------ builders

export function server(
  name: string,
  labels: Record<string, string> = {},
  spec: Partial<Server['spec']> = {},
): Server {
  return { metadata: { name, labels }, spec: { systemUUID: name, ...spec } };
}

export function claim(
  namespace: string,
  name: string,
  spec: Partial<ServerClaim['spec']> = {},
  labels: Record<string, string> = {},
): ServerClaim {
  return { metadata: { namespace, name, labels }, spec: { power: 'On', image: 'os:1', ...spec } };
}

export function maintenance(
  namespace: string,
  name: string,
  serverName: string,
  spec: Partial<ServerMaintenance['spec']> = {},
): ServerMaintenance {
  return {
    metadata: { namespace, name },
    spec: { serverRef: { name: serverName }, reason: 'FirmwareUpdate', ...spec },
  };
}

/** Creates a fleet budget and, as the budget controller would, marks its status observed. */
export async function createFleetBudget(
  admin: KubeClient,
  b: ServerDisruptionBudget,
): Promise<ServerDisruptionBudget> {
  const created = await fleetBudgets(admin).create(b);
  return fleetBudgets(admin).replaceStatus({
    ...created,
    status: { observedGeneration: created.metadata.generation ?? 1, grants: [] },
  });
}

export async function createTenantBudget(
  admin: KubeClient,
  b: ServerClaimDisruptionBudget,
): Promise<ServerClaimDisruptionBudget> {
  const created = await tenantBudgets(admin).create(b);
  return tenantBudgets(admin).replaceStatus({
    ...created,
    status: { observedGeneration: created.metadata.generation ?? 1, grants: [] },
  });
}

/** Creates a server bound to a new claim (as metal-operator would: server first, then the claim). */
export async function boundPair(
  admin: KubeClient,
  namespace: string,
  labels: Record<string, string> = {},
  claimLabels: Record<string, string> = {},
): Promise<{ server: Server; claim: ServerClaim }> {
  const serverName = uniqueName('srv');
  const claimName = uniqueName('claim');
  const s = await servers(admin).create(
    server(serverName, labels, { serverClaimRef: { namespace, name: claimName } }),
  );
  const c = await claims(admin).create(
    claim(namespace, claimName, { serverRef: { name: serverName } }, claimLabels),
  );
  return { server: s, claim: c };
}

/** Writes the ServerMaintenance status (merge patch on /status) as `who`. */
export function setState(
  who: KubeClient,
  m: ServerMaintenance,
  status: ServerMaintenance['status'],
  dryRun = false,
) {
  return maintenances(who).patch(
    m.metadata.name!,
    { status },
    { namespace: m.metadata.namespace, subresource: 'status', dryRun },
  );
}

// ------------------------------------------------------------------ assertions

/** Runs `write`, expects the webhook to refuse it with `code`, and returns the error's Status. */
export async function expectDenied(
  write: () => Promise<unknown>,
  code: string,
  httpStatus?: number,
): Promise<KubeApiError> {
  let err: unknown;
  try {
    await write();
  } catch (e) {
    err = e;
  }
  if (!(err instanceof KubeApiError))
    throw new Error(
      `expected a denial with ${code}, got ${err === undefined ? 'success' : errorMessage(err)}`,
    );
  expect(err.status.message).toContain('denied the request');
  expect(err.status.message).toContain(code);
  if (httpStatus !== undefined) expect(err.statusCode).toBe(httpStatus);
  return err;
}

/**
 * Retries `write` while the webhook answers that an object it needs is not in its cache yet (the
 * informers lag the API server by a watch event): the 429s a real controller would retry.
 */
export async function whenCached<T>(write: () => Promise<T>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await write();
    } catch (e) {
      const lagging =
        e instanceof KubeApiError && /METAL_ERR_(SERVER|CLAIM)_NOT_FOUND/.test(e.status.message ?? '');
      if (!lagging || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Retries `write` until it stops failing with `code` (e.g. until the webhook's cache saw an approval). */
export async function once<T>(what: string, write: () => Promise<T>, code: RegExp): Promise<T> {
  return waitFor(what, async () => {
    try {
      return { value: await write() };
    } catch (e) {
      if (e instanceof KubeApiError && code.test(e.status.message ?? '')) return undefined;
      throw e;
    }
  }).then((r) => r.value);
}

// ------------------------------------------------------------------ raw requests (Warning headers)

export interface RawResponse {
  status: number;
  warnings: string[];
  body: unknown;
}

/**
 * One API request as the identity in `kubeconfig`, returning the Warning headers the API server adds
 * for admission warnings (KubeClient returns bodies only).
 */
export async function rawRequest(
  kubeconfig: string,
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body: unknown,
  contentType = 'application/json',
): Promise<RawResponse> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const opts: { headers?: Record<string, string>; ca?: Buffer; cert?: Buffer; key?: Buffer } = {};
  await kc.applyToHTTPSOptions(opts);
  const agent = new Agent({ connect: { ca: opts.ca, cert: opts.cert, key: opts.key } });
  try {
    const res = await request(`${kc.getCurrentCluster()!.server}${path}`, {
      method,
      dispatcher: agent,
      headers: { ...opts.headers, 'content-type': contentType, accept: 'application/json' },
      body: JSON.stringify(body),
    });
    const warning = res.headers.warning;
    const list = warning === undefined ? [] : Array.isArray(warning) ? warning : [warning];
    return { status: res.statusCode, warnings: list, body: await res.body.json() };
  } finally {
    await agent.close();
  }
}

// ------------------------------------------------------------------ budgets the webhook has seen

/**
 * Creates a budget paused, waits until the webhook refuses a dry-run transition of `probe` with
 * METAL_ERR_BUDGET_PAUSED (its cache now selects the probe's server with this budget), then unpauses
 * it. Without this, a transition right after the budget's creation could be decided by a cache that
 * does not know the budget yet. Room is read fresh from the API server, so unpausing takes effect at once.
 */
export async function liveBudget<B extends ServerDisruptionBudget | ServerClaimDisruptionBudget>(
  admin: KubeClient,
  controller: KubeClient,
  budget: B,
  probe: ServerMaintenance,
): Promise<B> {
  const fleet = !budget.metadata.namespace;
  const res = (fleet ? fleetBudgets(admin) : tenantBudgets(admin)) as unknown as ResourceClient<B>;
  const created = await res.create({ ...budget, spec: { ...budget.spec, paused: true } });
  await res.replaceStatus({ ...created, status: { observedGeneration: created.metadata.generation ?? 1 } });
  await waitFor(
    `the webhook to select ${budget.metadata.name} for ${probe.spec.serverRef.name}`,
    async () => {
      try {
        await setState(controller, probe, { state: 'InMaintenance' }, true);
        return false;
      } catch (e) {
        if (e instanceof KubeApiError && e.status.message?.includes('METAL_ERR_BUDGET_PAUSED')) return true;
        if (e instanceof KubeApiError && e.statusCode === 429) return false;
        throw e;
      }
    },
  );
  const unpaused = await res.patch(
    budget.metadata.name!,
    { spec: { paused: false } },
    {
      namespace: budget.metadata.namespace,
    },
  );
  return res.replaceStatus({
    ...unpaused,
    status: { ...unpaused.status, observedGeneration: unpaused.metadata.generation ?? 1 },
  });
}

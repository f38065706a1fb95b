// Stand-ins for the two things a real fleet has between metal-operator's manager and a server's first
// boot, which a test machine cannot run: boot-operator (turns a ServerBootConfiguration into a network
// boot and marks it Ready) and metalprobe (the agent the probe image runs; it reports the machine to
// the manager's registry). Both are stand-ins, not simulations of metal-operator: the manager, its
// registry and its state machine are upstream's own.
//
// metalprobe stand-in, as upstream's cmd/metalprobe + internal/probe do at v0.7.0: once a Server in
// Discovery is powered on with its boot configuration Ready (the probe image "booted"), it reads the
// flags the manager wrote into the ignition Secret (<manager namespace>/<server>, key `ignition`:
// `--registry-url=… --server-uuid=…`) and POSTs {systemUUID, data: registry.Server} to
// `<registry-url>/register` (201 expected), then again every `reregisterMs` (metalprobe: 30 s) while the
// server stays in Discovery.
import { request } from 'undici';
import type { Server } from '../../../api/metal/v1alpha1/server.js';
import {
  ServerBootConfigurationKind,
  type ServerBootConfiguration,
} from '../../../api/metal/v1alpha1/serverbootconfiguration.js';
import type { KubeObject } from '../../../api/schema/meta.js';
import type { KubeClient } from '../../../lib/kube/client.js';
import { Informer } from '../../../lib/kube/informer.js';
import { Core, resourceOf } from '../../../lib/kube/resources.js';
import { ServerResource } from '../../../lib/kube/kinds.js';

const SBCResource = resourceOf(ServerBootConfigurationKind);

/** What the boot stand-ins may do (their own ServiceAccount gets exactly this). */
export const BOOT_STANDIN_RULES = [
  { apiGroups: ['metal.ironcore.dev'], resources: ['servers'], verbs: ['get', 'list', 'watch'] },
  {
    apiGroups: ['metal.ironcore.dev'],
    resources: ['serverbootconfigurations'],
    verbs: ['get', 'list', 'watch'],
  },
  { apiGroups: ['metal.ironcore.dev'], resources: ['serverbootconfigurations/status'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
];

export interface BootStandinOptions {
  client: KubeClient;
  /** The manager's --manager-namespace (where it writes discovery ignition Secrets). */
  managerNamespace: string;
  /** Maps the registry URL in the ignition (as the manager sees it) to one this process can reach. */
  registryAddress: (url: string) => string;
  reregisterMs?: number;
}

/** Flags upstream's discovery ignition passes to metalprobe. */
export function probeFlags(ignition: string): { registryURL: string; serverUUID: string } | undefined {
  const url = /--registry-url=(\S+)/.exec(ignition)?.[1];
  const uuid = /--server-uuid=(\S+)/.exec(ignition)?.[1];
  return url && uuid ? { registryURL: url, serverUUID: uuid } : undefined;
}

/** A registration payload shaped like upstream's internal/api/registry RegistrationPayload. */
export function registration(serverUUID: string, index: number) {
  const mac = `02:00:00:00:${((index >> 8) & 0xff).toString(16).padStart(2, '0')}:${(index & 0xff).toString(16).padStart(2, '0')}`;
  return {
    systemUUID: serverUUID,
    data: {
      timestamp: new Date().toISOString(),
      systemInfo: { systemInformation: { uuid: serverUUID, manufacturer: 'Contoso', productName: 'Mock' } },
      networkInterfaces: [
        { name: 'eth0', ipAddresses: [`127.0.1.${(index % 250) + 1}`], macAddress: mac, carrierStatus: 'up' },
      ],
    },
  };
}

export class BootStandins {
  readonly #o: Required<BootStandinOptions>;
  readonly #servers: Informer<Server>;
  readonly #sbcs: Informer<ServerBootConfiguration>;
  readonly #booted = new Map<string, NodeJS.Timeout>();
  /** Registrations the registry accepted, by server name (for tests and failure messages). */
  readonly registered = new Map<string, number>();
  readonly errors: string[] = [];
  #index = 0;

  constructor(options: BootStandinOptions) {
    this.#o = { reregisterMs: 30_000, ...options };
    this.#servers = new Informer<Server>(options.client.resource<Server>(ServerResource));
    this.#sbcs = new Informer<ServerBootConfiguration>(
      options.client.resource<ServerBootConfiguration>(SBCResource),
    );
  }

  async start(): Promise<void> {
    this.#sbcs.on({ add: (c) => this.#bootOperator(c), update: (_o, c) => this.#bootOperator(c) });
    const onServer = (s: Server) => this.#metalprobe(s);
    this.#servers.on({ add: onServer, update: (_o, s) => onServer(s), delete: (s) => this.#halt(s) });
    this.#sbcs.on({
      update: (_o, c) => {
        const s = this.#servers.getByName(c.spec.serverRef.name);
        if (s) onServer(s);
      },
    });
    this.#sbcs.start();
    this.#servers.start();
    await Promise.all([this.#sbcs.waitForSync(), this.#servers.waitForSync()]);
  }

  async stop(): Promise<void> {
    for (const t of this.#booted.values()) clearInterval(t);
    this.#booted.clear();
    await Promise.all([this.#servers.stop(), this.#sbcs.stop()]);
  }

  /** boot-operator stand-in: every boot configuration is served at once. */
  #bootOperator(c: ServerBootConfiguration): void {
    if (c.status?.state === 'Ready') return;
    this.#o.client
      .resource<ServerBootConfiguration>(SBCResource)
      .patch(
        c.metadata.name!,
        { status: { state: 'Ready' } },
        { namespace: c.metadata.namespace, subresource: 'status' },
      )
      .catch((e: Error) => this.errors.push(`SBC ${c.metadata.name}: ${e.message}`));
  }

  #halt(s: Server): void {
    const t = this.#booted.get(s.metadata.name!);
    if (t) clearInterval(t);
    this.#booted.delete(s.metadata.name!);
  }

  /** metalprobe stand-in: runs while the server is in Discovery, powered on, its probe boot Ready. */
  #metalprobe(s: Server): void {
    const name = s.metadata.name!;
    const ref = s.spec.bootConfigurationRef;
    const sbc = ref ? this.#sbcs.getByName(ref.name, ref.namespace) : undefined;
    const booted =
      s.status?.state === 'Discovery' && s.status.powerState === 'On' && sbc?.status?.state === 'Ready';
    if (!booted) {
      this.#halt(s);
      return;
    }
    if (this.#booted.has(name)) return;
    const index = this.#index++;
    const report = () => void this.#register(name, index);
    this.#booted.set(name, setInterval(report, this.#o.reregisterMs));
    report();
  }

  async #register(server: string, index: number): Promise<void> {
    try {
      const secret = await this.#o.client
        .resource<KubeObject & { data?: Record<string, string> }>(Core.Secret)
        .get(server, this.#o.managerNamespace);
      const flags = probeFlags(Buffer.from(secret.data?.ignition ?? '', 'base64').toString('utf8'));
      if (!flags)
        throw new Error(`ignition Secret ${this.#o.managerNamespace}/${server} has no metalprobe flags`);
      const res = await request(`${this.#o.registryAddress(flags.registryURL)}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(registration(flags.serverUUID, index)),
        signal: AbortSignal.timeout(5_000),
      });
      await res.body.dump();
      if (res.statusCode !== 201) throw new Error(`registry answered HTTP ${res.statusCode}`);
      this.registered.set(server, (this.registered.get(server) ?? 0) + 1);
    } catch (e) {
      this.errors.push(`metalprobe ${server}: ${(e as Error).message}`);
    }
  }
}

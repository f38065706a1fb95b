// Conformance of the Redfish client against sushy-tools (fake driver), an emulator we did not write.
import { jest } from '@jest/globals';
import { connectBmc, type Bmc } from '../../lib/redfish/bmc.js';
import { getBootOverride, restoreBootOverride, setBootOverride } from '../../lib/redfish/boot.js';
import { RedfishErrorCode, isRedfishError } from '../../lib/redfish/errors.js';
import { readBios } from '../../lib/redfish/bios.js';
import { waitForTask } from '../../lib/redfish/tasks.js';
import { simpleUpdate } from '../../lib/redfish/update.js';
import { powerState, reset, setPower } from '../../lib/redfish/power.js';
import { ejectMedia, findVirtualMedia, insertMedia } from '../../lib/redfish/virtual-media.js';
import { generateTls } from '../sim/bmc/tls.js';
import { startImageServer, type ImageServer } from './image-server.js';
import { startSushy, type SushyPeer } from './sushy.js';

jest.setTimeout(60_000);

let sushy: SushyPeer;
let images: ImageServer;

beforeAll(async () => {
  [sushy, images] = await Promise.all([startSushy(), startImageServer()]);
}, 120_000);
afterAll(async () => {
  await Promise.allSettled([sushy?.stop(), images?.close()]);
});

function open(systemId: string, password = sushy.credentials.password): Promise<Bmc> {
  return connectBmc({
    endpoint: sushy.endpoint,
    tls: { ca: sushy.ca },
    credentials: { username: sushy.credentials.username, password },
    systemId,
    timeoutMs: 10_000,
  });
}

describe('sushy-tools: auth and TLS', () => {
  it('uses Basic auth (no SessionService) and reads the system by UUID', async () => {
    const bmc = await open(sushy.systems[0]!.uuid);
    expect(bmc.client.authKind).toBe('basic');
    expect(bmc.systemPath).toBe(`/redfish/v1/Systems/${sushy.systems[0]!.uuid}`);
    expect(['On', 'Off']).toContain(await powerState(bmc));
    await bmc.close();
  });

  it('reports wrong credentials as AUTH without the password anywhere', async () => {
    const password = 'not-the-Sushy-pass';
    const e: unknown = await open(sushy.systems[0]!.uuid, password).catch((x: unknown) => x);
    expect(isRedfishError(e, RedfishErrorCode.Auth)).toBe(true);
    expect(`${(e as Error).message}${JSON.stringify((e as { details: unknown }).details)}`).not.toContain(
      password,
    );
  });

  it('refuses a certificate that does not chain to the pinned CA', async () => {
    const e: unknown = await connectBmc({
      endpoint: sushy.endpoint,
      tls: { ca: generateTls().ca },
      credentials: sushy.credentials,
    }).catch((x: unknown) => x);
    expect(isRedfishError(e, RedfishErrorCode.Connection)).toBe(true);
  });
});

describe('sushy-tools: power', () => {
  it('powers one system on and another off, polling through the asynchronous transitions', async () => {
    const [a, b] = await Promise.all([open(sushy.systems[0]!.uuid), open(sushy.systems[1]!.uuid)]);
    const wait = { timeoutMs: 20_000, pollMs: 250 };
    await Promise.all([setPower(a, 'Off', { ...wait, graceful: false }), setPower(b, 'On', wait)]);
    const [on, off] = await Promise.all([
      setPower(a, 'On', wait),
      setPower(b, 'Off', { ...wait, graceful: false }),
    ]);
    expect([on.changed, off.changed]).toEqual([true, true]);
    expect([await powerState(a), await powerState(b)]).toEqual(['On', 'Off']);
    await Promise.all([a.close(), b.close()]);
  });

  it('checks ResetType against AllowableValues before sending', async () => {
    const bmc = await open(sushy.systems[0]!.uuid);
    await expect(reset(bmc, 'PowerCycle')).rejects.toMatchObject({ code: RedfishErrorCode.Unsupported });
    await bmc.close();
  });

  it('maps its 501 for an unknown ResetType to UNSUPPORTED with the Redfish message', async () => {
    const bmc = await open(sushy.systems[0]!.uuid);
    const e: unknown = await bmc.client
      .post(`${bmc.systemPath}/Actions/ComputerSystem.Reset`, { ResetType: 'Bogus' })
      .catch((x: unknown) => x);
    expect(e).toMatchObject({ code: RedfishErrorCode.Unsupported, details: { status: 501 } });
    await bmc.close();
  });
});

describe('sushy-tools: boot override', () => {
  it('sets a PXE override with UEFI mode and restores the previous one', async () => {
    const bmc = await open(sushy.systems[1]!.uuid);
    const before = await getBootOverride(bmc);
    const res = await setBootOverride(bmc, { target: 'Pxe', mode: 'UEFI' });
    expect(res.changed).toBe(true);
    // sushy's fake driver always reports Continuous, whatever was asked.
    expect(await getBootOverride(bmc)).toMatchObject({ target: 'Pxe', mode: 'UEFI' });
    await restoreBootOverride(bmc, res.previous);
    expect((await getBootOverride(bmc)).target).toBe(before.target);
    await bmc.close();
  });

  it('keeps its plain-text 400 body as the error message', async () => {
    const bmc = await open(sushy.systems[1]!.uuid);
    const e: unknown = await bmc.client.patch(bmc.systemPath, { AssetTag: 'x' }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: RedfishErrorCode.Http, details: { status: 400 } });
    expect((e as Error).message).toMatch(/HTTP 400: \S/);
    await bmc.close();
  });
});

describe('sushy-tools: virtual media', () => {
  it('inserts an image the emulator really downloads, then ejects it', async () => {
    const bmc = await open(sushy.systems[0]!.uuid);
    const before = images.downloads();
    const res = await insertMedia(bmc, images.url);
    expect(res.changed).toBe(true);
    expect(images.downloads()).toBeGreaterThan(before);
    expect((await findVirtualMedia(bmc)).media).toMatchObject({ Inserted: true, Image: images.url });
    expect((await insertMedia(bmc, images.url)).changed).toBe(false);
    expect((await ejectMedia(bmc)).changed).toBe(true);
    expect((await findVirtualMedia(bmc)).media.Inserted).toBe(false);
    await bmc.close();
  });

  it('surfaces an image the server cannot fetch as an HTTP error', async () => {
    const bmc = await open(sushy.systems[0]!.uuid);
    const e: unknown = await insertMedia(bmc, images.missingUrl).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: RedfishErrorCode.Http });
    expect((await findVirtualMedia(bmc)).media.Inserted).toBe(false);
    await bmc.close();
  });
});

describe('sushy-tools: what the fake driver lacks', () => {
  it('has no BIOS resource: the client says UNSUPPORTED rather than guessing a path', async () => {
    const bmc = await open(sushy.systems[0]!.uuid);
    await expect(readBios(bmc)).rejects.toMatchObject({ code: RedfishErrorCode.Unsupported });
    await bmc.close();
  });
});

describe('sushy-tools: firmware paths', () => {
  it('SimpleUpdate refused by the fake driver is a coded HTTP error without the image password', async () => {
    const bmc = await open(sushy.systems[0]!.uuid);
    const password = 'image-Server-pass-31';
    const e: unknown = await simpleUpdate(bmc, {
      imageUri: images.url.replace('maintenance.iso', 'bios.bin'),
      // sushy-tools wants Targets (400 "Missing ImageURI and/or Targets" without).
      targets: [bmc.systemPath],
      credentials: { username: 'fw', password },
    }).catch((x: unknown) => x);
    expect(e).toMatchObject({
      code: RedfishErrorCode.Http,
      details: { status: 500 },
      message: expect.stringContaining('Failed fetching BIOS information'),
    });
    expect(JSON.stringify({ m: (e as Error).message, d: (e as { details: unknown }).details })).not.toContain(
      password,
    );
    await bmc.close();
  });

  it('reads its static Task to Completed through the task API', async () => {
    const bmc = await open(sushy.systems[0]!.uuid);
    const result = await waitForTask(
      bmc.client,
      { monitor: '/redfish/v1/TaskService/Tasks/42' },
      { timeoutMs: 5_000, pollMs: 50 },
    );
    expect(result.state).toBe('Completed');
    await bmc.close();
  });
});

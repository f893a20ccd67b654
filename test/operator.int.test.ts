/**
 * The operator path end to end: HTTP -> gateway -> RabbitMQ -> agent -> a real desktop (Xvfb +
 * AT-SPI + Chromium showing a page that reports every keydown). What arrived where is read from
 * the page's own reports. Agent A runs as a real process (dist/main.js), agent B in-process.
 */
import { createAmqpBus, type Bus } from '@screenfleet/bus';
import { topology, type ListElementsResponse, type ListedElement } from '@screenfleet/contracts';
import {
  createLinuxDesktop,
  createOperatorAgent,
  type Desktop,
  type OperatorAgent,
} from '@screenfleet/operator-agent';
import { createLogger, createMetrics, waitFor } from '@screenfleet/runtime';
import {
  freeDisplayNumber,
  startDesktopHarness,
  type DesktopHarness,
} from '../services/operator-agent/test/support/desktop-harness';
import type { KeydownReport } from '../services/operator-agent/test/support/test-page';
import { isolatedBroker, unackedMessages, uniqueName } from './services';
import {
  operatorKeys,
  operatorPublicKeyPem,
  post,
  startGateway,
  tokens,
  type RunningGateway,
} from './support/gateway';
import { startService, type ServiceProcess } from './support/processes';

const LIST = '/experimental/operator/list-interactable-elements';
const PRESS = '/experimental/operator/press-key-by-index';
const CLICK = '/experimental/operator/click-by-index';
const TYPE = '/experimental/operator/type-by-index';
const TIMEOUT_MS = 5000; // the gateway's default GATEWAY_OPERATOR_TIMEOUT
const B_SNAPSHOT_TTL_MS = 2000;
/** Pressed after a check that nothing was typed; no test expects it otherwise. */
const MARKER = { key: 'o', code: 'KeyO' };

/** For waits whose subject is time itself: a listing's expiry, a command's deadline. */
const letTimePass = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('operator commands through the gateway to agents on real desktops', () => {
  let broker: { url: string; remove(): Promise<void> } | undefined;
  let deskA: DesktopHarness | undefined;
  let deskB: DesktopHarness | undefined;
  let gateway: RunningGateway | undefined;
  let agentA: ServiceProcess | undefined;
  let agentB: { agent: OperatorAgent; bus: Bus; desktop: Desktop; stopped: boolean } | undefined;
  const devA = uniqueName('desk-a');
  const devB = uniqueName('desk-b');

  const g = () => gateway as RunningGateway;
  const a = () => deskA as DesktopHarness;
  const b = () => deskB as DesktopHarness;
  const call = (path: string, body: unknown, token?: string) => post(g().url + path, body, token);

  /** Lists the page through the gateway, retried until Chromium exposed the whole page. */
  async function listPage(device: string | undefined, extra: object = {}) {
    let last: Awaited<ReturnType<typeof call>> | undefined;
    return waitFor(
      async () => {
        last = await call(LIST, { app_name: 'Chromium', device_name: device, ...extra });
        const body = last.body as unknown as ListElementsResponse;
        return last.status === 200 && body.elements.some((e) => e.text === 'Submit') && body;
      },
      {
        timeoutMs: 20_000,
        intervalMs: 100,
        what: () => `the page listed (last: ${last?.status} ${JSON.stringify(last?.body)})`,
      },
    );
  }

  const indexOf = (listing: ListElementsResponse, text: string, role = 'entry'): number => {
    const found = listing.elements.find((e: ListedElement) => e.text === text && e.role === role);
    if (!found) throw new Error(`${text} not listed: ${JSON.stringify(listing.elements)}`);
    return found.index;
  };

  /** gateway_operator_commands_total for one action and result (the audit's counter). */
  const commandCount = async (action: string, result: string): Promise<number> => {
    const metric = await g().registry.getSingleMetric('gateway_operator_commands_total')?.get();
    const value = metric?.values.find(
      (v) => v.labels.action === action && v.labels.result === result,
    );
    return value?.value ?? 0;
  };

  const plain = (r: KeydownReport) => !r.ctrlKey && !r.shiftKey && !r.altKey && !r.metaKey;

  /**
   * The keydowns the page reported before `marker` (one of its reports). The page numbers its
   * keydowns and each report travels on its own, so this waits for every report numbered before
   * the marker's.
   */
  async function reportedBefore(desk: DesktopHarness, marker: KeydownReport) {
    const before = () => desk.keydowns().filter((r) => r.seq < marker.seq);
    return waitFor(() => before().length >= marker.seq - 1 && before(), {
      timeoutMs: 5000,
      what: `the page's reports numbered before ${marker.seq}`,
    });
  }

  /**
   * The keydowns the page reported before a marker key pressed now through `device`'s agent. The
   * agent runs one device's commands in order, so a key that was going to arrive has arrived by
   * then: what a fixed wait could only hope for. Lists the device again first (the listing to
   * press on may have expired).
   */
  async function keydownsBeforeMarker(desk: DesktopHarness, device: string) {
    const last = indexOf(await listPage(device), 'Last name');
    const pressed = await call(PRESS, {
      element_index: last,
      key: MARKER.key,
      device_name: device,
    });
    if (pressed.status !== 200) throw new Error(`marker press: ${JSON.stringify(pressed)}`);
    return reportedBefore(desk, await desk.waitForKeydown((r) => r.code === MARKER.code));
  }

  beforeAll(async () => {
    broker = await isolatedBroker();
    const first = freeDisplayNumber(110);
    const second = freeDisplayNumber(first + 1);
    const desks = await Promise.allSettled([
      startDesktopHarness(first),
      startDesktopHarness(second),
    ]);
    [deskA, deskB] = desks.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
    const failed = desks.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;

    gateway = await startGateway(broker.url);
    agentA = startService('operator-agent', {
      RABBITMQ_URL: broker.url,
      DEVICE_NAME: devA,
      DISPLAY: a().env.DISPLAY,
      DBUS_SESSION_BUS_ADDRESS: a().env.DBUS_SESSION_BUS_ADDRESS,
      OPERATOR_OPS_PORT: '0',
      OPERATOR_COMMAND_PUBLIC_KEY: operatorPublicKeyPem,
    });
    await agentA.waitForLog(/operator agent started/, 30_000);

    const logger = createLogger({ service: 'operator-agent', level: 'silent' });
    const bus = await createAmqpBus({
      url: broker.url,
      topology,
      connectionName: devB,
      logger,
      reconnect: { initialMs: 50, maxMs: 1000 },
      publishTimeoutMs: 5000,
    });
    const desktop = await createLinuxDesktop({ env: b().env });
    const agent = createOperatorAgent({
      bus,
      desktop,
      deviceName: devB,
      commandKey: operatorKeys.publicKey,
      snapshotTtlMs: B_SNAPSHOT_TTL_MS,
      logger,
      registry: createMetrics(),
    });
    await agent.start();
    agentB = { agent, bus, desktop, stopped: false };
  }, 120_000);

  afterAll(async () => {
    await agentA?.stop('SIGKILL');
    if (agentB && !agentB.stopped) await agentB.agent.stop();
    await agentB?.bus.close();
    await agentB?.desktop.close();
    await gateway?.close();
    await Promise.all([deskA?.stop(), deskB?.stop()]);
    await broker?.remove();
  }, 60_000);

  test('when the page is listed, then its inputs and button come with indices of the full list', async () => {
    const all = await listPage(devA);
    const last = indexOf(all, 'Last name');
    expect(all.elements.find((e) => e.index === last)).toMatchObject({
      role: 'entry',
      interactability: 'definite',
      position: { x: expect.any(Number), y: expect.any(Number) },
      size: { width: expect.any(Number), height: expect.any(Number) },
    });
    expect(indexOf(all, 'First name')).toBeLessThan(last);
    expect(indexOf(all, 'Submit', 'push button')).toBeGreaterThan(last);
    expect(all.stats.total).toBe(all.cache_info.element_count);
    expect(all.cache_info.ttl_seconds).toBe(30);

    // Filters hide elements but never renumber them.
    const filtered = await listPage(devA, {
      interactable_only: true,
      with_text_only: true,
      include_sometimes_interactable: false,
      window_name: null,
      use_background_apps: false,
      activate_app: true,
    });
    expect(indexOf(filtered, 'Last name')).toBe(last);
    expect(filtered.elements.every((e) => e.text !== '' && e.interactability === 'definite')).toBe(
      true,
    );
    const capped = await call(LIST, { app_name: 'chromium', device_name: devA, max_elements: 1 });
    expect((capped.body.elements as unknown[]).length).toBe(1);
  });

  test('when keys are pressed on the second input in the spec shape, then they arrive there with their modifiers', async () => {
    const last = indexOf(await listPage(devA), 'Last name');
    const press = (body: object) =>
      call(PRESS, { element_index: last, device_name: devA, ...body });

    await expect(press({ key: 'k', modifiers: ['ctrl', 'shift'] })).resolves.toMatchObject({
      status: 200,
      body: { success: true, message: expect.stringContaining('ctrl+shift+k') },
    });
    expect(await a().waitForKeydown((r) => r.code === 'KeyK')).toMatchObject({
      activeId: 'last',
      ctrlKey: true,
      shiftKey: true,
      altKey: false,
      metaKey: false,
    });

    expect((await press({ key: 'X' })).status).toBe(200);
    const x = await a().waitForKeydown((r) => r.code === 'KeyX');
    expect(x).toMatchObject({ activeId: 'last', key: 'x' });
    expect(plain(x)).toBe(true);

    expect((await press({ key: 'F2', modifiers: ['Option'] })).status).toBe(200);
    expect(await a().waitForKeydown((r) => r.code === 'F2')).toMatchObject({
      activeId: 'last',
      altKey: true,
      ctrlKey: false,
    });
  });

  test("when a press comes with an X-Request-Id, then the agent's audit line carries it (one grep follows it)", async () => {
    const last = indexOf(await listPage(devA), 'Last name');
    const requestId = `press-trace-${Date.now()}`;

    const response = await post(
      g().url + PRESS,
      { element_index: last, device_name: devA, key: 'y' },
      undefined,
      { 'x-request-id': requestId },
    );

    expect(response.status).toBe(200);
    const line = await agentA!.waitForLog(/command done/, 10_000, (l) => l.requestId === requestId);
    expect(line).toMatchObject({ audit: 'operator', requestId, key: 'y', result: 'success' });
  });

  test("when keys are pressed in screenpipe SDK's key_combo shape, then they arrive on the second input", async () => {
    const last = indexOf(await listPage(devA), 'Last name');
    const combo = (key_combo: string) =>
      call(PRESS, { element_index: last, key_combo, device_name: devA });

    expect((await combo('cmd+a')).status).toBe(200);
    expect(await a().waitForKeydown((r) => r.code === 'KeyA')).toMatchObject({
      activeId: 'last',
      metaKey: true,
      ctrlKey: false,
    });
    expect((await combo('return')).status).toBe(200);
    const enter = await a().waitForKeydown((r) => r.key === 'Enter');
    expect(enter).toMatchObject({ activeId: 'last', code: 'Enter' });
    expect(plain(enter)).toBe(true);
    // The keydown of Tab still lands on the input; the focus moves on afterwards.
    expect((await combo('tab')).status).toBe(200);
    expect(await a().waitForKeydown((r) => r.key === 'Tab')).toMatchObject({ activeId: 'last' });
    // The next press focuses the input again.
    expect((await combo('ctrl+7')).status).toBe(200);
    expect(await a().waitForKeydown((r) => r.code === 'Digit7')).toMatchObject({
      activeId: 'last',
      ctrlKey: true,
    });
  });

  test('when a request is wrong, then the status tells why and nothing is typed', async () => {
    const last = indexOf(await listPage(devA), 'Last name');
    const before = a().keydowns().length + b().keydowns().length;

    const badKey = await call(PRESS, { element_index: last, key: 'hyper', device_name: devA });
    expect(badKey.status).toBe(400);
    expect(JSON.stringify(badKey.body)).toMatch(/allowed: a-z, 0-9, f1-f24, enter/);
    const badCombo = await call(PRESS, {
      element_index: 0,
      key_combo: 'cmd+fn',
      device_name: devA,
    });
    expect(badCombo.status).toBe(400);
    const badList = await call(LIST, { appName: 'Chromium', device_name: devA });
    expect(badList).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('app_name is required') },
    });

    const outOfRange = await call(PRESS, { element_index: 9999, key: 'a', device_name: devA });
    expect(outOfRange.status).toBe(400);
    expect(outOfRange.body.errors).toEqual([
      expect.objectContaining({ path: 'element_index', detail: expect.stringMatching(/0 to \d+/) }),
    ]);

    const unknownDevice = await call(PRESS, { element_index: 0, key: 'a', device_name: 'nobody' });
    expect(unknownDevice.status).toBe(404);
    expect(unknownDevice.body.message).toMatch(/no agent is connected for device "nobody"/);

    // Agent B has not listed anything yet.
    const noSnapshot = await call(PRESS, { element_index: 0, key: 'a', device_name: devB });
    expect(noSnapshot.status).toBe(409);
    expect(noSnapshot.body.message).toMatch(/no element listing/);

    // Refused before the command is even read: still audited and counted.
    const counted = {
      forbidden: await commandCount('press', 'forbidden_scope'),
      unauthorized: await commandCount('press', 'unauthorized'),
      badJson: await commandCount('press', 'invalid_json'),
    };
    const noScope = await call(
      PRESS,
      { element_index: 0, key: 'a', device_name: devA },
      tokens.ingestDesk1.token,
    );
    expect(noScope.status).toBe(403);
    const noToken = await fetch(g().url + PRESS, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ element_index: 0, key: 'a', device_name: devA }),
    });
    expect(noToken.status).toBe(401);
    const badJson = await call(PRESS, '{"element_index": 0, "key": ');
    expect(badJson.status).toBe(400);
    expect({
      forbidden: await commandCount('press', 'forbidden_scope'),
      unauthorized: await commandCount('press', 'unauthorized'),
      badJson: await commandCount('press', 'invalid_json'),
    }).toEqual({
      forbidden: counted.forbidden + 1,
      unauthorized: counted.unauthorized + 1,
      badJson: counted.badJson + 1,
    });

    const wrongMethod = await fetch(g().url + PRESS, {
      headers: { authorization: `Bearer ${tokens.all.token}` },
    });
    expect(wrongMethod.status).toBe(405);

    const [typedA, typedB] = [
      await keydownsBeforeMarker(a(), devA),
      await keydownsBeforeMarker(b(), devB),
    ];
    expect(typedA.length + typedB.length).toBe(before);
  });

  test('when two agents serve two desktops, then each gets only its own commands', async () => {
    const lastA = indexOf(await listPage(devA), 'Last name');
    const lastB = indexOf(await listPage(devB), 'Last name');
    a().clearKeydowns();
    b().clearKeydowns();
    const countA = a().keydowns().length;
    const countB = b().keydowns().length;

    const [pa, pb] = await Promise.all([
      call(PRESS, { element_index: lastA, key: 'q', device_name: devA }),
      call(PRESS, { element_index: lastB, key: 'w', modifiers: ['shift'], device_name: devB }),
    ]);
    expect([pa.status, pb.status]).toEqual([200, 200]);
    expect(await a().waitForKeydown((r) => r.code === 'KeyQ')).toMatchObject({ activeId: 'last' });
    expect(await b().waitForKeydown((r) => r.code === 'KeyW')).toMatchObject({
      activeId: 'last',
      shiftKey: true,
    });
    const [typedA, typedB] = [
      await keydownsBeforeMarker(a(), devA),
      await keydownsBeforeMarker(b(), devB),
    ];
    expect(typedA.slice(countA).map((r) => r.code)).toEqual(['KeyQ']);
    expect(typedB.slice(countB).map((r) => r.code)).toEqual(['ShiftLeft', 'KeyW']);
  });

  test('when another listing replaced the one a cache_id names, then the press is a 409 and nothing is typed', async () => {
    const mine = await listPage(devA);
    const last = indexOf(mine, 'Last name');
    // Another client lists the same device (another app or window would do the same).
    const other = await call(LIST, { app_name: 'Chromium', device_name: devA, max_elements: 3 });
    expect(other.status).toBe(200);
    const theirs = other.body as unknown as ListElementsResponse;
    expect(theirs.cache_info.cache_id).not.toBe(mine.cache_info.cache_id);
    const count = a().keydowns().length;

    for (const body of [
      { key: 'v', cache_id: mine.cache_info.cache_id },
      { key_combo: 'shift+v', cache_id: mine.cache_info.cache_id },
    ]) {
      const stale = await call(PRESS, { element_index: last, device_name: devA, ...body });
      expect(stale.status).toBe(409);
      expect(stale.body.message).toMatch(/no longer this device's current/);
    }

    const current = await call(PRESS, {
      element_index: last,
      key: 'v',
      device_name: devA,
      cache_id: theirs.cache_info.cache_id,
    });
    expect(current.status).toBe(200);
    const v = await a().waitForKeydown((r) => r.code === 'KeyV');
    expect(v).toMatchObject({ activeId: 'last' });
    // The same agent ran the refused presses before this one: nothing they typed is still coming.
    expect((await reportedBefore(a(), v)).length).toBe(count);

    const malformed = await call(PRESS, {
      element_index: last,
      key: 'v',
      device_name: devA,
      cache_id: 'not a cache id',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors).toEqual([expect.objectContaining({ path: 'cache_id' })]);
  });

  test('when the listing expired, then pressing by index is a 409 and nothing is typed', async () => {
    const lastB = indexOf(await listPage(devB), 'Last name');
    const count = b().keydowns().length;
    await letTimePass(B_SNAPSHOT_TTL_MS + 100);
    const response = await call(PRESS, { element_index: lastB, key: 'e', device_name: devB });
    expect(response.status).toBe(409);
    expect(response.body.message).toMatch(/expired/);
    expect(b().keydowns().length).toBe(count);
  });

  test('when the page removed an element after the listing, then its stale index is a 409 and nothing is typed', async () => {
    const listing = await listPage(devA);
    const email = indexOf(listing, 'Email');
    await a().removeElement('email');
    const count = a().keydowns().length;

    const response = await call(PRESS, { element_index: email, key: 'g', device_name: devA });
    expect(response.status).toBe(409);
    expect(response.body.message).toMatch(/gone|changed/);
    expect((await keydownsBeforeMarker(a(), devA)).length).toBe(count);
  });

  test('when clicks and typing come by index, then they are refused exactly as presses are, and audited without the text', async () => {
    const listing = await listPage(devA);
    const first = indexOf(listing, 'First name');
    const count = a().keydowns().length;
    const clicked = a().clicks().length;

    const noScope = await call(
      TYPE,
      { element_index: first, text: 'x', device_name: devA },
      tokens.ingestDesk1.token,
    );
    expect(noScope.status).toBe(403);
    const bell = await call(TYPE, { element_index: first, text: 'a\u0007', device_name: devA });
    expect(bell.status).toBe(400);
    expect(bell.body.errors).toEqual([expect.objectContaining({ path: 'text', rule: 'pattern' })]);
    const long = await call(TYPE, {
      element_index: first,
      text: 'é'.repeat(501),
      device_name: devA,
    });
    expect(long.status).toBe(400);

    // Another client lists: the first listing's index is refused, nothing typed or clicked.
    const other = await call(LIST, { app_name: 'Chromium', device_name: devA, max_elements: 2 });
    expect(other.status).toBe(200);
    const cacheId = listing.cache_info.cache_id;
    for (const [path, body] of [
      [TYPE, { element_index: first, text: 'stale', cache_id: cacheId }],
      [CLICK, { element_index: first, cache_id: cacheId }],
    ] as const) {
      const stale = await call(path, { ...body, device_name: devA });
      expect(stale.status).toBe(409);
    }

    const requestId = `type-trace-${Date.now()}`;
    const typed = await post(
      g().url + TYPE,
      { element_index: first, text: 'zäh', device_name: devA },
      undefined,
      { 'x-request-id': requestId },
    );
    expect(typed).toMatchObject({ status: 200, body: { success: true } });
    const line = await agentA!.waitForLog(/command done/, 10_000, (l) => l.requestId === requestId);
    expect(line).toMatchObject({ audit: 'operator', action: 'type', textLength: 3 });
    expect(JSON.stringify(line)).not.toContain('zäh');
    const typedKeys = (await keydownsBeforeMarker(a(), devA)).slice(count);
    // A character the keymap lacks is typed on a lent key: its keydown has no key name.
    expect(typedKeys.map((r) => `${r.key} on ${r.activeId}`)).toEqual([
      'z on first',
      '\u0000 on first',
      'h on first',
    ]);
    expect(a().clicks().length).toBe(clicked);
  });

  test('when an agent has no usable desktop, then it still answers, with 503 and the reason', async () => {
    const devC = uniqueName('desk-c');
    const agentC = startService('operator-agent', {
      RABBITMQ_URL: (broker as { url: string }).url,
      DEVICE_NAME: devC,
      DISPLAY: `:${freeDisplayNumber(180)}`,
      OPERATOR_OPS_PORT: '0',
      OPERATOR_COMMAND_PUBLIC_KEY: operatorPublicKeyPem,
    });
    try {
      await agentC.waitForLog(/operator agent started/, 30_000);
      const response = await call(LIST, { app_name: 'Chromium', device_name: devC });
      expect(response.status).toBe(503);
      expect(response.body.message).toMatch(/does not answer/);
      expect(response.headers.get('retry-after')).toBe('5');
    } finally {
      expect(await agentC.stop('SIGTERM')).toBe(0);
    }
  });

  test('when no device_name is sent, then several agents are a 400 naming them and a single one is used', async () => {
    const several = await call(LIST, { app_name: 'Chromium' });
    expect(several.status).toBe(400);
    expect(JSON.stringify(several.body)).toContain(devA);
    expect(JSON.stringify(several.body)).toContain(devB);

    const { agent } = agentB as { agent: OperatorAgent };
    await agent.stop();
    (agentB as { stopped: boolean }).stopped = true;

    const last = indexOf(await listPage(undefined), 'Last name');
    const response = await call(PRESS, { element_index: last, key_combo: 'shift+m' });
    expect(response.status).toBe(200);
    expect(await a().waitForKeydown((r) => r.code === 'KeyM')).toMatchObject({
      activeId: 'last',
      shiftKey: true,
    });
  });

  test('when the agent stalls past the deadline, then the gateway answers 504 and the command is never executed late', async () => {
    const agent = agentA as ServiceProcess;
    const last = indexOf(await listPage(devA), 'Last name');
    const count = a().keydowns().length;
    // The agent acks the listing just after replying: stopped in between, that unacked listing
    // would fill its prefetch of 1 and the press would expire in the queue instead of reaching
    // the agent (also never pressed, but not the path this test is about). Wait for the ack.
    await waitFor(async () => (await unackedMessages(`operator-agent ${devA}`)) === 0, {
      timeoutMs: 30_000,
      intervalMs: 100,
      what: "agent A's ack of the listing",
    });
    agent.child.kill('SIGSTOP');
    const started = Date.now();
    const response = await call(PRESS, { element_index: last, key: 'z', device_name: devA });
    expect(response.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1000);
    // Past the deadline, then let the agent run again.
    await letTimePass(TIMEOUT_MS + 1500 - (Date.now() - started));
    agent.child.kill('SIGCONT');
    // The broker had already pushed the command to the stalled agent (prefetch 1), so the
    // queue's expiration no longer applies: the agent itself must refuse it by its age.
    await agent.waitForLog(/command refused: .*not executed/, 3000);
    expect(
      (await keydownsBeforeMarker(a(), devA)).slice(count).filter((r) => r.code === 'KeyZ'),
    ).toEqual([]);
  });

  test('when the agent is killed mid-test, then commands get 404 or 504 within the timeout, not a hang', async () => {
    const agent = agentA as ServiceProcess;
    await agent.stop('SIGKILL');
    const started = Date.now();
    const response = await call(PRESS, { element_index: 0, key: 'a', device_name: devA });
    expect([404, 504]).toContain(response.status);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1000);
    const list = await call(LIST, { app_name: 'Chromium' });
    expect([404, 504]).toContain(list.status);
  });
});

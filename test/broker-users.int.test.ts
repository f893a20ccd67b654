/**
 * The broker users of docs/broker-users.md, with the permissions read from that page, against
 * the real RabbitMQ: the gateway and an agent work with them, and a client holding the agent's
 * credentials cannot make the agent press (it is refused: not signed by the gateway).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createAmqpBus, DeviceTakenError, type Bus } from '@screenfleet/bus';
import {
  agentTopology,
  topology,
  createEnvelope,
  deviceQueueName,
  operatorTimings,
  type OperatorResult,
} from '@screenfleet/contracts';
import { createOperatorAgent, type OperatorAgent } from '@screenfleet/operator-agent';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import { isolatedBroker, rabbitmqctl, uniqueName } from './services';
import { fakeDesktop } from './support/fake-desktop';
import { operatorKeys, post, startGateway, tokens, type RunningGateway } from './support/gateway';

/**
 * user -> [configure, write, read], as the doc's rabbitmqctl commands set them, with the shell
 * variables `overrides` names set otherwise (as a reader sets DEVICE_QUEUE for their desktop).
 */
function documentedPermissions(
  overrides: Record<string, string> = {},
): Map<string, [string, string, string]> {
  const doc = readFileSync(path.join(__dirname, '..', 'docs', 'broker-users.md'), 'utf8');
  // The shell variables the commands use (NAME='...'), expanded inside double quotes.
  const variables = new Map(
    [...doc.matchAll(/^([A-Z_]+)='([^']*)'$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']),
  );
  for (const [name, value] of Object.entries(overrides)) {
    if (!variables.has(name)) throw new Error(`docs/broker-users.md sets no ${name}`);
    variables.set(name, value);
  }
  const permissions = new Map<string, [string, string, string]>();
  const command =
    /set_permissions -p "\$VHOST" (\S+) \\\n\s+(["'])(.+?)\2 \\\n\s+(["'])(.+?)\4 \\\n\s+(["'])(.+?)\6/g;
  const unquote = (quote: string, value: string) =>
    quote === '"'
      ? value
          .replace(/\$([A-Z_]+)/g, (_, name: string) => variables.get(name) ?? '')
          .replace('\\$', '$')
      : value;
  for (const m of doc.matchAll(command)) {
    permissions.set(m[1] ?? '', [
      unquote(m[2] ?? '', m[3] ?? ''),
      unquote(m[4] ?? '', m[5] ?? ''),
      unquote(m[6] ?? '', m[7] ?? ''),
    ]);
  }
  return permissions;
}

describe('per-service broker users (docs/broker-users.md)', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let agentBus: Bus;
  let agent: OperatorAgent;
  let forger: Bus;
  let gatewayUrl: string;
  let agentUrl: string;
  const fake = fakeDesktop();
  const device = uniqueName('desk-users');
  const created: string[] = [];
  const logger = createLogger({ service: 'test', level: 'silent' });

  /** A user with the documented permissions of `role` in the test's vhost; its broker URL. */
  async function userFor(role: string, overrides?: Record<string, string>): Promise<string> {
    const permissions = documentedPermissions(overrides).get(role);
    if (!permissions) throw new Error(`docs/broker-users.md sets no permissions for ${role}`);
    const name = uniqueName(role);
    const password = uniqueName('pw');
    await rabbitmqctl(['add_user', name, password]);
    created.push(name);
    const url = new URL(broker.url);
    const vhost = decodeURIComponent(url.pathname.slice(1));
    await rabbitmqctl(['set_permissions', '-p', vhost, name, ...permissions]);
    url.username = name;
    url.password = password;
    return url.toString();
  }

  beforeAll(async () => {
    broker = await isolatedBroker();
    gatewayUrl = await userFor('sf-gateway');
    gateway = await startGateway(gatewayUrl);
    // The doc's desk-1 user, for this test's device: its queue, regex-escaped as the doc says.
    const escaped = deviceQueueName(device).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    agentUrl = await userFor('sf-agent-desk-1', { DEVICE_QUEUE: escaped });
    agentBus = await createAmqpBus({
      url: agentUrl,
      topology: agentTopology,
      connectionName: device,
      logger,
    });
    agent = createOperatorAgent({
      bus: agentBus,
      desktop: fake.desktop,
      deviceName: device,
      commandKey: operatorKeys.publicKey,
      snapshotTtlMs: 60_000,
      logger,
      registry: createMetrics(),
    });
    await agent.start();
    // Someone who got hold of the agent's credentials.
    forger = await createAmqpBus({
      url: agentUrl,
      topology: agentTopology,
      connectionName: uniqueName('forger'),
      logger,
    });
  });

  afterAll(async () => {
    await forger?.close();
    await agent?.stop();
    await agentBus?.close();
    await gateway?.close();
    await broker?.remove();
    for (const name of created) await rabbitmqctl(['delete_user', name]);
  });

  it('when the gateway and an agent use their own users, then a press goes through', async () => {
    const listed = await post(gateway.url + '/experimental/operator/list-interactable-elements', {
      app_name: 'FakeApp',
      device_name: device,
    });
    expect(listed.status).toBe(200);
    const pressed = await post(gateway.url + '/experimental/operator/press-key-by-index', {
      element_index: 2,
      key: 'q',
      device_name: device,
    });
    expect(pressed.status).toBe(200);
    expect(fake.presses).toEqual([{ key: 'q', modifiers: [], element: 'FakeApp field 2' }]);
  });

  it("when a client with the agent's credentials publishes a press to the device, then the broker refuses it; with the gateway's, the agent does; nothing is pressed", async () => {
    fake.presses.length = 0;
    const forged = createEnvelope('operator.command', {
      action: 'press',
      timeout_ms: 5000,
      budget_ms: operatorTimings(5000).budgetMs,
      requested_by: tokens.all.id,
      element_index: 2,
      key: 'w',
      modifiers: [],
    });
    // The agent's user may not publish on the operator exchange: the broker refuses it.
    await expect(
      forger.sendToDevice<OperatorResult>(device, forged, { timeoutMs: 5000 }),
    ).rejects.toThrow();
    // The gateway's user may: the agent refuses what the gateway did not sign.
    const withGatewayUser = await createAmqpBus({
      url: gatewayUrl,
      topology,
      connectionName: uniqueName('forger-gw'),
      logger,
    });
    try {
      const reply = await withGatewayUser.sendToDevice<OperatorResult>(device, forged, {
        timeoutMs: 5000,
      });
      expect(reply.payload).toMatchObject({ success: false });
      expect(reply.payload.message).toMatch(/refused \(unsigned\)/);
    } finally {
      await withGatewayUser.close();
    }
    expect(fake.presses).toEqual([]);
  });

  it("when a client with the agent's credentials serves another device, or this device a second time, then it is refused: the first only by the broker's permissions, the second as taken", async () => {
    const squatter = await createAmqpBus({
      url: agentUrl,
      topology: agentTopology,
      connectionName: uniqueName('squatter'),
      logger,
    });
    try {
      // Holding another desktop's queue would keep that desktop's agent from starting.
      await expect(
        squatter.serveDevice(uniqueName('desk-other'), () => Promise.reject(new Error('never'))),
      ).rejects.toThrow(/ACCESS_REFUSED/);
      await expect(
        squatter.serveDevice(device, () => Promise.reject(new Error('never'))),
      ).rejects.toBeInstanceOf(DeviceTakenError);
    } finally {
      await squatter.close();
    }
    // The agent still has its device.
    const listed = await post(gateway.url + '/experimental/operator/list-interactable-elements', {
      app_name: 'FakeApp',
      device_name: device,
    });
    expect(listed.status).toBe(200);
  });
});

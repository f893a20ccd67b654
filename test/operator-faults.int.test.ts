/**
 * Operator commands when the broker fails under them, against the real RabbitMQ: the gateway
 * in-process, an agent in-process on a fake desktop that records presses (and, once, a second
 * agent process for the same device, which must not start).
 */
import { createAmqpBus, type Bus } from '@screenfleet/bus';
import { generateKeyPairSync } from 'node:crypto';
import { connect } from 'amqplib';
import {
  createEnvelope,
  deviceQueueName,
  exchangeNames,
  operatorTimings,
  signCommand,
  topology,
  type Envelope,
  type OperatorResult,
} from '@screenfleet/contracts';
import { createOperatorAgent, type OperatorAgent } from '@screenfleet/operator-agent';
import { createLogger, createMetrics, type Registry } from '@screenfleet/runtime';
import { brokerConnectionPids, isolatedBroker, rabbitmqctl, uniqueName } from './services';
import { fakeDesktop } from './support/fake-desktop';
import {
  operatorKeys,
  operatorPublicKeyPem,
  post,
  startGateway,
  tokens,
  type RunningGateway,
} from './support/gateway';
import { startService } from './support/processes';

const LIST = '/experimental/operator/list-interactable-elements';
const PRESS = '/experimental/operator/press-key-by-index';

describe('operator commands when the broker connection fails', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let agentBus: Bus;
  let agent: OperatorAgent;
  let agentRegistry: Registry;
  const fake = fakeDesktop();
  const device = uniqueName('desk-fault');

  beforeAll(async () => {
    broker = await isolatedBroker();
    // A long wait: rabbitmqctl takes seconds on a loaded machine, the press must still be in flight.
    gateway = await startGateway(broker.url, { reconnectMs: 200, operatorTimeoutMs: 30_000 });
    const logger = createLogger({ service: 'operator-agent', level: 'silent' });
    agentBus = await createAmqpBus({
      url: broker.url,
      topology,
      connectionName: uniqueName('agent'),
      logger,
    });
    agent = createOperatorAgent({
      bus: agentBus,
      desktop: fake.desktop,
      deviceName: device,
      commandKey: operatorKeys.publicKey,
      snapshotTtlMs: 60_000,
      logger,
      registry: (agentRegistry = createMetrics()),
    });
    await agent.start();
  });

  afterAll(async () => {
    fake.release();
    await agent?.stop();
    await agentBus?.close();
    await gateway?.close();
    await broker?.remove();
  });

  it('when the gateway loses its connection while a press is in flight, then the client gets a non-retryable "outcome unknown" (no 503, no Retry-After) and the key was pressed once', async () => {
    const listed = await post(gateway.url + LIST, { app_name: 'FakeApp', device_name: device });
    expect(listed.status).toBe(200);

    const [pid] = await brokerConnectionPids(gateway.connectionName);
    const started = fake.holdPresses();
    const answer = post(gateway.url + PRESS, {
      element_index: 3,
      key: 'enter',
      device_name: device,
    });
    await started; // the agent is pressing
    await rabbitmqctl(['close_connection', pid ?? 'none', 'closed by a test']);
    const response = await answer;
    // Once the agent acked the command, the broker will not hand it over again.
    const acked = new Promise((resolve) => agentBus.events.once('acked', resolve));
    fake.release();

    expect(response.status).toBe(500);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(response.body).toMatchObject({
      success: false,
      code: 'outcome_unknown',
      message: expect.stringContaining('may or may not have been carried out'),
    });
    await acked;
    expect(fake.presses).toEqual([{ key: 'enter', modifiers: [], element: 'FakeApp field 3' }]);
  });

  it("when client B listed another app after client A, then A's press without cache_id is a 409 asking for it and nothing is pressed; with its cache_id, or B's own, the right element", async () => {
    fake.presses.length = 0;
    // The previous test closed the gateway's connection: wait for the reconnect.
    if (!gateway.bus.isConnected()) {
      await new Promise<void>((resolve) => gateway.bus.events.once('connected', () => resolve()));
    }
    const a = tokens.all.token;
    const b = tokens.operatorOnly.token;
    const listA = await post(gateway.url + LIST, { app_name: 'AppX', device_name: device }, a);
    const listB = await post(gateway.url + LIST, { app_name: 'AppY', device_name: device }, b);
    expect([listA.status, listB.status]).toEqual([200, 200]);

    const refused = await post(gateway.url + PRESS, { element_index: 3, key: 'a' }, a);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/another client: send the cache_id/);
    expect(fake.presses).toEqual([]);

    // B's press without cache_id (and without device_name: its listing's device) is its own.
    const own = await post(gateway.url + PRESS, { element_index: 3, key: 'b' }, b);
    expect(own.status).toBe(200);
    const cacheB = (listB.body.cache_info as { cache_id: string }).cache_id;
    const named = await post(
      gateway.url + PRESS,
      { element_index: 2, key: 'c', cache_id: cacheB },
      a,
    );
    expect(named.status).toBe(200);
    expect(fake.presses).toEqual([
      { key: 'b', modifiers: [], element: 'AppY field 3' },
      { key: 'c', modifiers: [], element: 'AppY field 2' },
    ]);
  });

  it('when a second agent process starts with the same device name, then it exits non-zero with one clear line naming the device, and commands still reach the first', async () => {
    const second = startService('operator-agent', {
      RABBITMQ_URL: broker.url,
      DEVICE_NAME: device,
      OPERATOR_OPS_PORT: '0',
      OPERATOR_COMMAND_PUBLIC_KEY: operatorPublicKeyPem,
    });
    try {
      expect(await second.exited(30_000)).toBe(1);
    } finally {
      await second.stop('SIGKILL');
    }
    const fatal = second.lines.filter((line) => line.level === 'fatal');
    expect(fatal).toEqual([
      expect.objectContaining({
        msg: `start failed: device "${device}" is already served by another operator agent (its queue ${deviceQueueName(device)} is held by another connection): stop that agent, or give this one another device name`,
      }),
    ]);

    fake.presses.length = 0;
    const listed = await post(gateway.url + LIST, { app_name: 'FakeApp', device_name: device });
    expect(listed.status).toBe(200);
    const pressed = await post(gateway.url + PRESS, {
      element_index: 4,
      key: 'z',
      device_name: device,
    });
    expect(pressed.status).toBe(200);
    expect(fake.presses).toEqual([{ key: 'z', modifiers: [], element: 'FakeApp field 4' }]);
  });

  describe('commands not from the gateway', () => {
    let forger: Bus;
    const refusals = async (reason: string): Promise<number> => {
      const metric = await agentRegistry
        .getSingleMetric('operator_agent_commands_refused_total')
        ?.get();
      return metric?.values.find((v) => v.labels.reason === reason)?.value ?? 0;
    };
    const pressCommand = {
      action: 'press',
      timeout_ms: 5000,
      budget_ms: operatorTimings(5000).budgetMs,
      requested_by: tokens.all.id,
      element_index: 1,
      key: 'k',
      modifiers: ['ctrl'],
    };

    beforeAll(async () => {
      forger = await createAmqpBus({
        url: broker.url,
        topology,
        connectionName: uniqueName('forger'),
        logger: createLogger({ service: 'forger', level: 'silent' }),
      });
    });
    afterAll(async () => {
      await forger?.close();
    });

    it('when a broker client publishes a forged press (unsigned, or signed with another key) to the device, then the agent refuses it and nothing is pressed', async () => {
      await post(gateway.url + LIST, { app_name: 'FakeApp', device_name: device });
      fake.presses.length = 0;
      const unsigned = createEnvelope('operator.command', pressCommand);
      const reply = await forger.sendToDevice<OperatorResult>(device, unsigned, {
        timeoutMs: 5000,
      });
      expect(reply.payload).toMatchObject({
        success: false,
        message: expect.stringMatching(/refused \(unsigned\)/),
      });
      const otherKey = generateKeyPairSync('ed25519').privateKey;
      const forged = signCommand(
        createEnvelope('operator.command', pressCommand),
        device,
        otherKey,
      );
      const reply2 = await forger.sendToDevice<OperatorResult>(device, forged, { timeoutMs: 5000 });
      expect(reply2.payload.message).toMatch(/refused \(bad_signature\)/);
      // A genuine signature for another device does not transfer either.
      const elsewhere = signCommand(
        createEnvelope('operator.command', pressCommand),
        'another-desk',
        operatorKeys.privateKey,
      );
      const reply3 = await forger.sendToDevice<OperatorResult>(device, elsewhere, {
        timeoutMs: 5000,
      });
      expect(reply3.payload.message).toMatch(/refused \(bad_signature\)/);

      expect(fake.presses).toEqual([]);
      expect(await refusals('unsigned')).toBe(1);
      expect(await refusals('bad_signature')).toBe(2);
    });

    it('when a genuine command is captured and published again, then the replay is refused and nothing more is pressed', async () => {
      // An eavesdropper's queue on the device's routing key gets a copy of every command.
      const connection = await connect(broker.url);
      const channel = await connection.createChannel();
      const { queue } = await channel.assertQueue('', { exclusive: true });
      await channel.bindQueue(queue, exchangeNames.operator, device);
      try {
        await post(gateway.url + LIST, { app_name: 'FakeApp', device_name: device });
        fake.presses.length = 0;
        const genuine = await post(gateway.url + PRESS, {
          element_index: 1,
          key: 'x',
          device_name: device,
        });
        expect(genuine.status).toBe(200);
        expect(fake.presses).toHaveLength(1);

        // The eavesdropper's copy of the press (the listing's came before it).
        const captured = await new Promise<Envelope>((resolve) => {
          void channel.consume(
            queue,
            (message) => {
              const envelope = message && (JSON.parse(message.content.toString()) as Envelope);
              if ((envelope?.payload as { action?: string } | undefined)?.action === 'press') {
                resolve(envelope!);
              }
            },
            { noAck: true },
          );
        });
        expect(captured.signature).toEqual(expect.any(String));

        const replay = await forger.sendToDevice<OperatorResult>(device, captured, {
          timeoutMs: 5000,
        });
        expect(replay.payload.message).toMatch(/refused \(replayed\)/);
        expect(fake.presses).toHaveLength(1);
        expect(await refusals('replayed')).toBe(1);
      } finally {
        await connection.close();
      }
    });
  });
});

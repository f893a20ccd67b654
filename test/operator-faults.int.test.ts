/**
 * Operator commands when the broker fails under them, against the real RabbitMQ: the gateway
 * in-process, an agent in-process on a fake desktop that records presses.
 */
import { createAmqpBus, type Bus } from '@screenfleet/bus';
import { topology } from '@screenfleet/contracts';
import { createOperatorAgent, type OperatorAgent } from '@screenfleet/operator-agent';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import { brokerConnectionPids, isolatedBroker, rabbitmqctl, uniqueName } from './services';
import { fakeDesktop } from './support/fake-desktop';
import { post, startGateway, tokens, type RunningGateway } from './support/gateway';

const LIST = '/experimental/operator/list-interactable-elements';
const PRESS = '/experimental/operator/press-key-by-index';

describe('operator commands when the broker connection fails', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let agentBus: Bus;
  let agent: OperatorAgent;
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
      snapshotTtlMs: 60_000,
      logger,
      registry: createMetrics(),
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
    fake.release();

    expect(response.status).toBe(500);
    expect(response.headers.get('retry-after')).toBeNull();
    expect(response.body).toMatchObject({
      success: false,
      code: 'outcome_unknown',
      message: expect.stringContaining('may or may not have been carried out'),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(fake.presses).toEqual([{ key: 'enter', modifiers: [], element: 'FakeApp field 3' }]);
  });

  it("when client B listed another app after client A, then A's press without cache_id is a 409 asking for it and nothing is pressed; with its cache_id, or B's own, the right element", async () => {
    fake.presses.length = 0;
    const until = Date.now() + 10_000; // the previous test closed the gateway's connection
    while (!gateway.bus.isConnected() && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
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
});

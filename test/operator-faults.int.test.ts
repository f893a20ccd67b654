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
import { post, startGateway, type RunningGateway } from './support/gateway';

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
    gateway = await startGateway(broker.url, { reconnectMs: 200 });
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
    expect(fake.presses).toEqual([{ key: 'enter', modifiers: [] }]);
  });
});

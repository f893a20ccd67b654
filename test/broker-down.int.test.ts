import { closeBrokerConnections, isolatedBroker } from './services';
import { buildBatch } from './support/content';
import { post, startGateway, type RunningGateway } from './support/gateway';

describe('POST /add while the broker is unreachable', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;

  beforeAll(async () => {
    broker = await isolatedBroker();
    // A slow first reconnect leaves a window in which the gateway has no broker.
    gateway = await startGateway(broker.url, { reconnectMs: 3000 });
  });

  afterAll(async () => {
    await gateway?.close();
    await broker?.remove();
  });

  it('when the connection is gone, then the gateway answers 503 with a reason and Retry-After, and 200 again once reconnected', async () => {
    const disconnected = new Promise<void>((resolve) =>
      gateway.bus.events.once('disconnected', () => resolve()),
    );
    const reconnected = new Promise<void>((resolve) =>
      gateway.bus.events.once('connected', () => resolve()),
    );
    expect(await closeBrokerConnections(gateway.connectionName)).toBe(1);
    await disconnected;

    const down = await post(`${gateway.url}/add`, buildBatch('down-1', 0, 3));

    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(down.body).toMatchObject({
      success: false,
      message: 'not connected to the broker',
      errors: [],
    });

    await reconnected;
    const up = await post(`${gateway.url}/add`, buildBatch('down-1', 0, 3));
    expect(up).toMatchObject({ status: 200, body: { success: true } });
  });
});

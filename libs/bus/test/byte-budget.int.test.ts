import { createEnvelope } from '@screenfleet/contracts';
import { buildTopology, TestBroker, waitUntil } from './support';

// Prefetch counts messages; the byte budget bounds what the handlers hold, on the real broker.
describe('amqp bus: byte budget of a consumer', () => {
  const broker = new TestBroker();
  afterEach(() => broker.cleanup());

  it('when large messages wait, then the handlers never hold more bytes than the budget, deliveries pause meanwhile, and every message is acked', async () => {
    const t = buildTopology();
    const { bus } = await broker.startBus(t);
    const messageBytes = 256 * 1024;
    const budget = 600 * 1024;
    for (let i = 0; i < 16; i++)
      await bus.publish(
        t.exchange,
        'content.frames',
        createEnvelope('content.batch', { i, text: 'x'.repeat(messageBytes) }),
      );

    let holding = 0;
    let mostHeld = 0;
    let acked = 0;
    let done: () => void = () => undefined;
    const allAcked = new Promise<void>((resolve) => (done = resolve));
    await bus.consume<{ text: string }>(
      t.queue,
      async ({ envelope }) => {
        const bytes = envelope.payload.text.length;
        holding += bytes;
        mostHeld = Math.max(mostHeld, holding);
        await new Promise((resolve) => setTimeout(resolve, 100));
        holding -= bytes;
        if (++acked >= 16) done();
        return 'ack';
      },
      { prefetch: 16, maxBytesInFlight: budget },
    );

    const flow: string[] = [];
    bus.events.on('deliveries-paused', () => flow.push('paused'));
    bus.events.on('deliveries-resumed', () => flow.push('resumed'));
    await allAcked;
    // The last handler's bytes are freed after it returns: then the consumer resumes.
    await waitUntil(bus, 'deliveries-resumed', () => flow[flow.length - 1] === 'resumed');

    expect(mostHeld).toBeLessThanOrEqual(budget);
    expect(mostHeld).toBeGreaterThanOrEqual(2 * messageBytes);
    expect(flow[0]).toBe('paused');
    expect(flow[flow.length - 1]).toBe('resumed');
    const admin = await broker.adminChannel();
    expect((await admin.checkQueue(t.queue)).messageCount).toBe(0);

    // Deliveries really resumed: a later message is taken and acked.
    await bus.publish(
      t.exchange,
      'content.frames',
      createEnvelope('content.batch', { text: 'late' }),
    );
    await waitUntil(bus, 'acked', () => acked >= 17);
    expect(acked).toBe(17);
  });
});

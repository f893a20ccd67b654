import { createEnvelope, type Envelope } from '@screenfleet/contracts';
import type { Delivery, Outcome } from '@screenfleet/bus';
import { describeBusContract, type BusUnderTest } from './bus.contract';
import { buildTopology, TestBroker, waitForEvent, waitUntil } from './support';

interface Batch {
  items: string[];
}

const buildBatch = (items = ['a', 'b']) => createEnvelope<Batch>('content.batch', { items });

/** The broker's confirm means "in the queue"; dead letters go through the DLX to t.deadQueue. */
function amqpBus(): BusUnderTest {
  const broker = new TestBroker();
  return {
    confirms: 'stored',
    startBus: async (t) => (await broker.startBus(t)).bus,
    async watchDeadLetters(bus, t) {
      const dead: Envelope[] = [];
      await bus.consume(
        t.deadQueue,
        ({ envelope }) => Promise.resolve(void dead.push(envelope)).then(() => 'ack' as const),
        { prefetch: 10 },
      );
      return {
        arrived: (count) =>
          waitUntil(bus, 'acked', () => dead.length >= count).then(() => [...dead]),
      };
    },
    cleanup: () => broker.cleanup(),
  };
}

// Publish/consume, request/reply and device commands: the same suite runs on the memory bus.
describeBusContract('amqp', amqpBus);

// What only a broker shows: AMQP properties, its own delivery limit, bodies not sent by a Bus.
describe('amqp bus: what only a broker shows', () => {
  const broker = new TestBroker();
  afterEach(() => broker.cleanup());

  it('when published, then the message is persistent JSON with the envelope metadata as properties', async () => {
    const t = buildTopology();
    const { bus } = await broker.startBus(t);
    const sent = buildBatch(['x']);

    await bus.publish(t.exchange, 'content.frames', sent);

    const message = await (await broker.adminChannel()).get(t.queue, { noAck: true });
    if (!message) throw new Error('the confirmed message is not in the queue');
    expect(JSON.parse(message.content.toString()) as unknown).toEqual(sent);
    expect(message.properties).toMatchObject({
      contentType: 'application/json',
      deliveryMode: 2,
      messageId: sent.message_id,
      correlationId: sent.correlation_id,
      type: 'content.batch',
      timestamp: Math.floor(Date.parse(sent.sent_at) / 1000),
    });
  });

  it('when retries exceed x-delivery-limit, then the broker dead-letters the message', async () => {
    const t = buildTopology(2);
    const { bus } = await broker.startBus(t);
    const handled: Array<Delivery<Batch>> = [];
    await bus.consume<Batch>(
      t.queue,
      (delivery) => Promise.resolve(record(handled, delivery, 'retry')),
      {
        prefetch: 1,
      },
    );
    const dead: Array<Delivery<Batch>> = [];
    const arrived = waitForEvent(bus, 'acked', { match: (queue) => queue === t.deadQueue });
    await bus.consume<Batch>(
      t.deadQueue,
      (delivery) => Promise.resolve(record(dead, delivery, 'ack')),
      {
        prefetch: 1,
      },
    );
    const sent = buildBatch();

    await bus.publish(t.exchange, 'content.frames', sent);
    await arrived;

    expect(handled.map((delivery) => delivery.deliveryCount)).toEqual([0, 1, 2]);
    expect(dead.map((delivery) => delivery.envelope)).toEqual([sent]);
  });

  it('when a body is not an envelope, then it is dead-lettered without reaching the handler', async () => {
    const t = buildTopology(5);
    const { bus } = await broker.startBus(t);
    const handled: Array<Delivery<Batch>> = [];
    await bus.consume<Batch>(
      t.queue,
      (delivery) => Promise.resolve(record(handled, delivery, 'ack')),
      {
        prefetch: 1,
      },
    );
    const deadLettered = waitForEvent(bus, 'dead-lettered');
    const admin = await broker.adminChannel();

    admin.publish(t.exchange, 'content.frames', Buffer.from('{not json'), { persistent: true });
    const [queue, envelope] = await deadLettered;

    expect([queue, envelope]).toEqual([t.queue, undefined]);
    expect(handled).toHaveLength(0);
    const dead = await admin.get(t.deadQueue, { noAck: true });
    expect(dead && dead.content.toString()).toBe('{not json');
  });
});

function record<T>(into: Array<Delivery<T>>, delivery: Delivery<T>, outcome: Outcome): Outcome {
  into.push(delivery);
  return outcome;
}

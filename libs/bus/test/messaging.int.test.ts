import { BrokerUnavailableError, createEnvelope } from '@screenfleet/contracts';
import type { Delivery, Outcome } from '@screenfleet/bus';
import { buildTopology, TestBroker, waitForEvent } from './support';

interface Batch {
  items: string[];
}

const buildBatch = (items = ['a', 'b']) => createEnvelope<Batch>('content.batch', { items });
const summary = (deliveries: Array<Delivery<Batch>>) =>
  deliveries.map(({ redelivered, deliveryCount }) => ({ redelivered, deliveryCount }));

describe('amqp bus: publish and consume', () => {
  const broker = new TestBroker();
  afterEach(() => broker.cleanup());

  it('when a consumer acks, then it got the envelope exactly as published and the queue is empty', async () => {
    const t = buildTopology();
    const { bus } = await broker.startBus(t);
    const received: Array<Delivery<Batch>> = [];
    await bus.consume<Batch>(
      t.queue,
      (delivery) => Promise.resolve(record(received, delivery, 'ack')),
      {
        prefetch: 5,
      },
    );
    const sent = buildBatch();
    const acked = waitForEvent(bus, 'acked', {
      match: (_, envelope) => envelope.message_id === sent.message_id,
    });

    await bus.publish(t.exchange, 'content.frames', sent);
    await acked;

    expect(received).toEqual([{ envelope: sent, redelivered: false, deliveryCount: 0 }]);
    const admin = await broker.adminChannel();
    expect((await admin.checkQueue(t.queue)).messageCount).toBe(0);
  });

  it('when messages wait in a queue, then queueDepth counts them; a missing queue rejects without harming the bus', async () => {
    const t = buildTopology();
    const { bus } = await broker.startBus(t);
    await bus.publish(t.exchange, 'content.frames', buildBatch());
    await bus.publish(t.exchange, 'content.frames', buildBatch());

    expect(await bus.queueDepth(t.queue)).toBe(2);
    await expect(bus.queueDepth(`${t.queue}-missing`)).rejects.toThrow(/NOT_FOUND/);
    await bus.publish(t.exchange, 'content.frames', buildBatch());
    expect(await bus.queueDepth(t.queue)).toBe(3);
  });

  it('when no queue is bound for a message, then publish rejects instead of confirming a dropped message', async () => {
    const t = buildTopology();
    const { bus } = await broker.startBus(t);

    await expect(bus.publish(t.exchange, 'audio.raw', buildBatch())).rejects.toThrow(
      new BrokerUnavailableError(
        `no queue is bound for ${t.exchange}/audio.raw: the message was not stored`,
      ),
    );
    await bus.publish(t.exchange, 'content.frames', buildBatch());
    expect(await bus.queueDepth(t.queue)).toBe(1);
  });

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

  it("when a handler answers 'retry', then the message comes back with an increasing deliveryCount", async () => {
    const t = buildTopology(5);
    const { bus } = await broker.startBus(t);
    const received: Array<Delivery<Batch>> = [];
    await bus.consume<Batch>(
      t.queue,
      (delivery) =>
        Promise.resolve(record(received, delivery, received.length < 2 ? 'retry' : 'ack')),
      { prefetch: 1 },
    );
    const acked = waitForEvent(bus, 'acked');

    await bus.publish(t.exchange, 'content.frames', buildBatch());
    await acked;

    expect(summary(received)).toEqual([
      { redelivered: false, deliveryCount: 0 },
      { redelivered: true, deliveryCount: 1 },
      { redelivered: true, deliveryCount: 2 },
    ]);
  });

  it('when a handler throws, then the message is retried rather than lost', async () => {
    const t = buildTopology(5);
    const { bus } = await broker.startBus(t);
    const received: Array<Delivery<Batch>> = [];
    await bus.consume<Batch>(
      t.queue,
      (delivery) => {
        received.push(delivery);
        return received.length === 1
          ? Promise.reject(new Error('store down'))
          : Promise.resolve('ack');
      },
      { prefetch: 1 },
    );
    const retried = waitForEvent(bus, 'retried');
    const acked = waitForEvent(bus, 'acked');

    await bus.publish(t.exchange, 'content.frames', buildBatch());
    await Promise.all([retried, acked]);

    expect(summary(received)).toEqual([
      { redelivered: false, deliveryCount: 0 },
      { redelivered: true, deliveryCount: 1 },
    ]);
  });

  it("when a handler answers 'dead', then the message goes to the dead-letter queue at once", async () => {
    const t = buildTopology(5);
    const { bus } = await broker.startBus(t);
    const handled: Array<Delivery<Batch>> = [];
    await bus.consume<Batch>(
      t.queue,
      (delivery) => Promise.resolve(record(handled, delivery, 'dead')),
      {
        prefetch: 1,
      },
    );
    const dead: Array<Delivery<Batch>> = [];
    await bus.consume<Batch>(
      t.deadQueue,
      (delivery) => Promise.resolve(record(dead, delivery, 'ack')),
      {
        prefetch: 1,
      },
    );
    const sent = buildBatch();
    const deadLettered = waitForEvent(bus, 'dead-lettered', {
      match: (queue) => queue === t.queue,
    });
    const arrived = waitForEvent(bus, 'acked', { match: (queue) => queue === t.deadQueue });

    await bus.publish(t.exchange, 'content.frames', sent);
    await Promise.all([deadLettered, arrived]);

    expect(handled).toHaveLength(1);
    expect(dead.map((delivery) => delivery.envelope)).toEqual([sent]);
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

import { once } from 'node:events';
import {
  BrokerUnavailableError,
  createEnvelope,
  DeviceUnavailableError,
  OutcomeUnknownError,
  TimeoutError,
  type Envelope,
  type Topology,
} from '@screenfleet/contracts';
import type { Bus, BusEvents, Delivery, Outcome } from './bus';
import {
  createMemoryBus,
  DEFAULT_DELIVERY_LIMIT,
  topicMatches,
  type MemoryBusOptions,
} from './memory.bus';
import { MessageTooLargeError } from './message.codec';

// What only the in-process bus does: its confirm means "handled", not "stored". The behaviour
// it shares with the amqp bus is in test/bus.contract.ts, run against both.

interface Batch {
  n: number;
}

const buildBatch = (n = 1) => createEnvelope<Batch>('content.batch', { n });
const buildCommand = (key: string) => createEnvelope('operator.command', { key });
const replyTo = (request: Envelope) =>
  createEnvelope('operator.result', {}, { correlationId: request.correlation_id });

function buildTopology(deliveryLimit: number | undefined): Topology {
  return {
    exchanges: [
      { name: 'capture', type: 'topic' },
      { name: 'operator', type: 'direct' },
      { name: 'presence', type: 'fanout' },
    ],
    queues: [
      {
        name: 'content',
        arguments:
          deliveryLimit === undefined
            ? { 'x-queue-type': 'quorum' }
            : { 'x-queue-type': 'quorum', 'x-delivery-limit': deliveryLimit },
      },
      { name: 'frames-audit', arguments: { 'x-queue-type': 'quorum' } },
      { name: 'rpc', arguments: { 'x-queue-type': 'classic' } },
      { name: 'presence', arguments: { 'x-queue-type': 'stream' } },
    ],
    bindings: [
      { queue: 'content', exchange: 'capture', routingKey: 'content.#' },
      { queue: 'frames-audit', exchange: 'capture', routingKey: '*.audit' },
      { queue: 'presence', exchange: 'presence', routingKey: '' },
    ],
  };
}

interface DeadLetter {
  queue: string;
  envelope: Envelope;
  reason: string;
}

const buses: Bus[] = [];
afterEach(async () => {
  await Promise.all(buses.splice(0).map((bus) => bus.close()));
});

function startBus(options: Partial<MemoryBusOptions> & { deliveryLimit?: number } = {}) {
  const deadLetters: DeadLetter[] = [];
  const { deliveryLimit, ...rest } = options;
  const bus = createMemoryBus({
    topology: buildTopology('deliveryLimit' in options ? deliveryLimit : 2),
    deadLetter: (queue, envelope, reason) => {
      deadLetters.push({ queue, envelope, reason });
      return Promise.resolve();
    },
    ...rest,
  });
  buses.push(bus);
  return { bus, deadLetters };
}

function latch(): { released: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { released, release };
}

function nextEvent<K extends keyof BusEvents>(bus: Bus, name: K): Promise<BusEvents[K]> {
  return once(bus.events as unknown as NodeJS.EventEmitter, name) as Promise<BusEvents[K]>;
}

/** Whether the promise settled by now, without waiting for it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('memory bus: a confirm means handled', () => {
  it('when a consumer is still handling a message, then its publish has not resolved; it resolves after the ack', async () => {
    const { bus } = startBus();
    const { released, release } = latch();
    const started = latch();
    const order: string[] = [];
    await bus.consume<Batch>(
      'content',
      async () => {
        started.release();
        await released;
        order.push('handled');
        return 'ack';
      },
      { prefetch: 1 },
    );

    const published = bus.publish('capture', 'content.frames', buildBatch());
    await started.released;

    expect(await settled(published)).toBe(false);
    release();
    await published;
    order.push('confirmed');
    expect(order).toEqual(['handled', 'confirmed']);
  });

  it('when no consumer takes the queue, then the message waits in it and the publish stays pending until one acks', async () => {
    const { bus } = startBus();
    const published = bus.publish('capture', 'content.frames', buildBatch());

    expect(await bus.queueDepth('content')).toBe(1);
    expect(await settled(published)).toBe(false);

    await bus.consume('content', () => Promise.resolve<Outcome>('ack'), { prefetch: 1 });
    await published;
    expect(await bus.queueDepth('content')).toBe(0);
  });

  it('when a message reaches two queues, then publish resolves only once both handled it', async () => {
    const { bus } = startBus();
    const audit = latch();
    await bus.consume('content', () => Promise.resolve<Outcome>('ack'), { prefetch: 1 });
    await bus.consume(
      'frames-audit',
      async () => {
        await audit.released;
        return 'ack';
      },
      { prefetch: 1 },
    );
    const contentAcked = nextEvent(bus, 'acked');

    // 'content.#' and '*.audit' both match.
    const published = bus.publish('capture', 'content.audit', buildBatch());
    expect((await contentAcked)[0]).toBe('content');

    expect(await settled(published)).toBe(false);
    audit.release();
    await published;
  });

  it("when a handler answers 'dead', then publish resolves only once the sink stored the dead letter", async () => {
    const stored = latch();
    const deadLetters: DeadLetter[] = [];
    const { bus } = startBus({
      deadLetter: async (queue, envelope, reason) => {
        await stored.released;
        deadLetters.push({ queue, envelope, reason });
      },
    });
    await bus.consume('content', () => Promise.resolve<Outcome>('dead'), { prefetch: 1 });
    const sent = buildBatch();

    const published = bus.publish('capture', 'content.frames', sent);

    expect(await settled(published)).toBe(false);
    stored.release();
    await published;
    expect(deadLetters).toEqual([{ queue: 'content', envelope: sent, reason: 'rejected' }]);
  });

  it('when the dead-letter sink fails, then the publish rejects BrokerUnavailableError rather than confirming a lost message', async () => {
    const { bus } = startBus({ deadLetter: () => Promise.reject(new Error('disk full')) });
    await bus.consume('content', () => Promise.resolve<Outcome>('dead'), { prefetch: 1 });

    const published = bus.publish('capture', 'content.frames', buildBatch());

    await expect(published).rejects.toBeInstanceOf(BrokerUnavailableError);
    await expect(published).rejects.toThrow(/disk full/);
  });

  it('when retries pass the queue\'s x-delivery-limit, then the message goes to the sink as "delivery_limit" and the publish resolves', async () => {
    const { bus, deadLetters } = startBus({ deliveryLimit: 2 });
    const counts: number[] = [];
    await bus.consume(
      'content',
      ({ deliveryCount }) => {
        counts.push(deliveryCount);
        return Promise.resolve<Outcome>('retry');
      },
      { prefetch: 1 },
    );
    const sent = buildBatch();

    await bus.publish('capture', 'content.frames', sent);

    expect(counts).toEqual([0, 1, 2]);
    expect(deadLetters).toEqual([{ queue: 'content', envelope: sent, reason: 'delivery_limit' }]);
  });

  it('when a queue sets no x-delivery-limit, then the default limit applies', async () => {
    const { bus, deadLetters } = startBus({ deliveryLimit: undefined });
    let deliveries = 0;
    await bus.consume(
      'content',
      () => {
        deliveries++;
        return Promise.resolve<Outcome>('retry');
      },
      {
        prefetch: 1,
      },
    );

    await bus.publish('capture', 'content.frames', buildBatch());

    expect(deliveries).toBe(DEFAULT_DELIVERY_LIMIT + 1);
    expect(deadLetters.map((letter) => letter.reason)).toEqual(['delivery_limit']);
  });

  it('when no handler takes a publish within publishTimeoutMs, then it rejects "nothing was stored" and its message is withdrawn', async () => {
    const { bus } = startBus({ publishTimeoutMs: 50 });

    await expect(bus.publish('capture', 'content.frames', buildBatch())).rejects.toThrow(
      new BrokerUnavailableError(
        'the message was not taken by a handler within 50 ms: nothing was stored',
      ),
    );
    expect(await bus.queueDepth('content')).toBe(0);
  });

  it('when a handler holds the message past publishTimeoutMs and then acks, then the publish resolves', async () => {
    const { bus } = startBus({ publishTimeoutMs: 20, outcomeTimeoutMs: 5_000 });
    const release = deferred();
    await bus.consume('content', () => release.promise.then((): Outcome => 'ack'), {
      prefetch: 1,
    });

    const published = bus.publish('capture', 'content.frames', buildBatch());
    await sleep(60); // past the publish timeout, with the handler still working
    release.resolve();

    await expect(published).resolves.toBeUndefined();
  });

  it('when a handler holds the message past publishTimeoutMs + outcomeTimeoutMs, then the publish rejects OutcomeUnknownError', async () => {
    const { bus } = startBus({ publishTimeoutMs: 20, outcomeTimeoutMs: 30 });
    const release = deferred();
    await bus.consume('content', () => release.promise.then((): Outcome => 'ack'), {
      prefetch: 1,
    });

    const published = bus.publish('capture', 'content.frames', buildBatch());
    await expect(published).rejects.toBeInstanceOf(OutcomeUnknownError);
    release.resolve();
  });

  it('when a handler gives the message back after the publish timed out, then the publish rejects "nothing was stored" and it is not handled again', async () => {
    const { bus } = startBus({ publishTimeoutMs: 20, outcomeTimeoutMs: 5_000 });
    const release = deferred();
    let deliveries = 0;
    await bus.consume(
      'content',
      () => {
        deliveries += 1;
        return release.promise.then((): Outcome => 'retry');
      },
      { prefetch: 1 },
    );

    const published = bus.publish('capture', 'content.frames', buildBatch());
    await sleep(60);
    release.resolve();

    await expect(published).rejects.toThrow(
      new BrokerUnavailableError(
        'its handler gave the message back after the publish timed out: nothing was stored',
      ),
    );
    await sleep(20);
    expect(deliveries).toBe(1);
    expect(await bus.queueDepth('content')).toBe(0);
  });

  it('when a publish times out while its message waits for the byte budget, then no handler ever gets it', async () => {
    const { bus } = startBus({ publishTimeoutMs: 30 });
    const release = deferred();
    const handled: number[] = [];
    await bus.consume<Batch>(
      'content',
      (delivery) => {
        handled.push(delivery.envelope.payload.n);
        return release.promise.then((): Outcome => 'ack');
      },
      // The first message takes the whole budget; the second is taken and waits at the gate.
      { prefetch: 10, maxBytesInFlight: 1 },
    );

    const first = bus.publish('capture', 'content.frames', buildBatch(1));
    const second = bus.publish('capture', 'content.frames', buildBatch(2));
    await expect(second).rejects.toBeInstanceOf(BrokerUnavailableError);
    release.resolve();
    await first;
    await sleep(20);

    expect(handled).toEqual([1]);
  });
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('memory bus: deliveries', () => {
  it('when a handler gets a message, then it is a JSON copy, as if it crossed a broker', async () => {
    const { bus } = startBus();
    const received: Array<Delivery<{ at: unknown; n: number }>> = [];
    await bus.consume<{ at: unknown; n: number }>(
      'content',
      (delivery) => {
        received.push(delivery);
        return Promise.resolve<Outcome>('ack');
      },
      { prefetch: 1 },
    );
    const at = new Date('2024-05-01T10:00:00.000Z');
    const sent = createEnvelope('content.batch', { at, n: 1 });

    const published = bus.publish('capture', 'content.frames', sent);
    sent.payload.n = 2;
    await published;

    expect(received[0]!.envelope.payload).toEqual({ at: '2024-05-01T10:00:00.000Z', n: 1 });
    expect(received[0]!.envelope).not.toBe(sent);
  });

  it('when a subscription is cancelled while a message waits for its byte budget, then that message goes to the next consumer', async () => {
    const { bus } = startBus();
    const { released, release } = latch();
    const started = latch();
    const first: Array<Delivery<Batch>> = [];
    // The first message fits the budget with room to spare, so a second one is taken, and waits.
    const bytes = JSON.stringify(buildBatch(1)).length;
    const subscription = await bus.consume<Batch>(
      'content',
      async (delivery) => {
        first.push(delivery);
        started.release();
        await released;
        return 'ack';
      },
      { prefetch: 2, maxBytesInFlight: Math.floor(bytes * 1.5) },
    );
    const paused = nextEvent(bus, 'deliveries-paused');
    const one = bus.publish('capture', 'content.frames', buildBatch(1));
    const two = bus.publish('capture', 'content.frames', buildBatch(2));
    await started.released;
    await paused;
    expect(await bus.queueDepth('content')).toBe(0);

    const cancelled = subscription.cancel();
    release();
    await Promise.all([cancelled, one]);
    const next: Array<Delivery<Batch>> = [];
    await bus.consume<Batch>(
      'content',
      (delivery) => {
        next.push(delivery);
        return Promise.resolve<Outcome>('ack');
      },
      { prefetch: 1 },
    );
    await two;

    expect(first.map((delivery) => delivery.envelope.payload.n)).toEqual([1]);
    expect(
      next.map(({ envelope, redelivered, deliveryCount }) => [
        envelope.payload.n,
        redelivered,
        deliveryCount,
      ]),
    ).toEqual([[2, true, 0]]);
  });

  it("when a handler answers 'retry' after its subscription was cancelled, then the message goes to the next consumer and the publish waits for it", async () => {
    const { bus } = startBus();
    const { released, release } = latch();
    const started = latch();
    const subscription = await bus.consume(
      'content',
      async () => {
        started.release();
        // The worker is stopping: what it has not written, it gives back.
        await released;
        return 'retry';
      },
      { prefetch: 1 },
    );
    const published = bus.publish('capture', 'content.frames', buildBatch());
    await started.released;

    const cancelled = subscription.cancel();
    release();
    await cancelled;
    expect(await settled(published)).toBe(false);
    expect(await bus.queueDepth('content')).toBe(1);

    const next: Array<Delivery<Batch>> = [];
    await bus.consume<Batch>(
      'content',
      (delivery) => {
        next.push(delivery);
        return Promise.resolve<Outcome>('ack');
      },
      { prefetch: 1 },
    );
    await published;
    expect(next.map(({ redelivered, deliveryCount }) => ({ redelivered, deliveryCount }))).toEqual([
      { redelivered: true, deliveryCount: 1 },
    ]);
  });

  it('when two consumers share a queue, then they take turns', async () => {
    const { bus } = startBus();
    const seen: string[] = [];
    for (const name of ['a', 'b'])
      await bus.consume(
        'content',
        () => {
          seen.push(name);
          return Promise.resolve<Outcome>('ack');
        },
        {
          prefetch: 1,
        },
      );

    await Promise.all([1, 2, 3, 4].map((n) => bus.publish('capture', 'content.x', buildBatch(n))));

    expect([...seen].sort()).toEqual(['a', 'a', 'b', 'b']);
  });

  it('when large messages wait, then the handlers never hold more bytes than the budget, deliveries pause meanwhile, and every publish resolves', async () => {
    const { bus } = startBus();
    const budget = 3000;
    const text = 'x'.repeat(1000);
    const flow: string[] = [];
    bus.events.on('deliveries-paused', () => flow.push('paused'));
    bus.events.on('deliveries-resumed', () => flow.push('resumed'));
    let holding = 0;
    let mostHeld = 0;
    await bus.consume<{ text: string }>(
      'content',
      async ({ envelope }) => {
        const bytes = JSON.stringify(envelope).length;
        holding += bytes;
        mostHeld = Math.max(mostHeld, holding);
        await new Promise((resolve) => setTimeout(resolve, 5));
        holding -= bytes;
        return 'ack';
      },
      { prefetch: 16, maxBytesInFlight: budget },
    );

    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        bus.publish('capture', 'content.frames', createEnvelope('content.batch', { i, text })),
      ),
    );

    expect(mostHeld).toBeLessThanOrEqual(budget);
    expect(mostHeld).toBeGreaterThan(budget / 2);
    expect(flow[0]).toBe('paused');
    expect(flow[flow.length - 1]).toBe('resumed');
  });

  it('when a stream is published to, then the publish resolves at once and every open subscription reads every entry', async () => {
    const { bus } = startBus();
    await bus.publish('presence', '', buildBatch(0));
    const readers: number[][] = [[], []];
    for (const reader of readers)
      await bus.consume<Batch>(
        'presence',
        ({ envelope }) => {
          reader.push(envelope.payload.n);
          return Promise.resolve<Outcome>('retry');
        },
        { prefetch: 10 },
      );
    let retried = 0;
    bus.events.on('retried', () => (retried += 1));

    await bus.publish('presence', '', buildBatch(1));
    await bus.publish('presence', '', buildBatch(2));
    while (retried < 4) await nextEvent(bus, 'retried');

    // A stream keeps its entries whatever the reader answers: no redelivery.
    expect(readers).toEqual([
      [1, 2],
      [1, 2],
    ]);
    expect(await bus.queueDepth('presence')).toBe(0);
  });

  it('when a queue or exchange does not exist, then consume, serve and publish reject NOT_FOUND; an oversized message is refused', async () => {
    const { bus } = startBus({ maxMessageBytes: 250 });
    const ack = () => Promise.resolve<Outcome>('ack');

    await expect(bus.consume('nowhere', ack, { prefetch: 1 })).rejects.toThrow(/NOT_FOUND/);
    await expect(
      bus.serve('nowhere', (request) => Promise.resolve(replyTo(request))),
    ).rejects.toThrow(/NOT_FOUND/);
    await expect(bus.publish('nowhere', 'x', buildBatch())).rejects.toThrow(
      new BrokerUnavailableError(
        "the broker did not take the message: NOT_FOUND - no exchange 'nowhere'",
      ),
    );
    await expect(
      bus.publish(
        'capture',
        'content.frames',
        createEnvelope('content.batch', { text: 'x'.repeat(300) }),
      ),
    ).rejects.toBeInstanceOf(MessageTooLargeError);
  });
});

describe('memory bus: requests and device commands', () => {
  it('when a call waits and a server starts before its timeout, then the server answers it', async () => {
    const { bus } = startBus();
    const reply = bus.call('rpc', buildCommand('a'), { timeoutMs: 2000 });
    expect(await bus.queueDepth('rpc')).toBe(1);

    await bus.serve('rpc', (request) => Promise.resolve(replyTo(request)));

    expect((await reply).type).toBe('operator.result');
  });

  it('when a command is not taken within expirationMs, then the agent never sees it and the sender times out', async () => {
    const { bus } = startBus();
    const { released, release } = latch();
    const seen: string[] = [];
    await bus.serveDevice<{ key: string }, object>('desk', async (command) => {
      seen.push(command.payload.key);
      if (command.payload.key === 'slow') await released;
      return replyTo(command);
    });
    const slow = bus.sendToDevice('desk', buildCommand('slow'), { timeoutMs: 2000 });

    const late = bus.sendToDevice('desk', buildCommand('late'), {
      timeoutMs: 300,
      expirationMs: 100,
    });
    await expect(late).rejects.toBeInstanceOf(TimeoutError);
    release();
    await slow;

    expect(seen).toEqual(['slow']);
  });

  it('when an agent stops with a command still queued, then that command fails DeviceUnavailableError at once and the one in hand is answered', async () => {
    const { bus } = startBus();
    const { released, release } = latch();
    const started = latch();
    const subscription = await bus.serveDevice('desk', async (command) => {
      started.release();
      await released;
      return replyTo(command);
    });
    const inHand = bus.sendToDevice('desk', buildCommand('a'), { timeoutMs: 5000 });
    await started.released;
    const queued = bus.sendToDevice('desk', buildCommand('b'), { timeoutMs: 5000 });

    const cancelled = subscription.cancel();
    await expect(queued).rejects.toBeInstanceOf(DeviceUnavailableError);
    release();
    await cancelled;

    expect((await inHand).type).toBe('operator.result');
  });
});

describe('memory bus: close', () => {
  it('when closed, then running handlers finish and count, unhandled publishes and unanswered calls reject BrokerUnavailableError, and the bus is disconnected', async () => {
    const { bus } = startBus();
    const { released, release } = latch();
    const started = latch();
    await bus.consume(
      'content',
      async () => {
        started.release();
        await released;
        return 'ack';
      },
      { prefetch: 1 },
    );
    const inHand = bus.publish('capture', 'content.frames', buildBatch(1));
    await started.released;
    const waiting = bus.publish('capture', 'content.frames', buildBatch(2));
    const call = bus.call('rpc', buildCommand('a'), { timeoutMs: 5000 });

    const outcomes = Promise.all([
      expect(inHand).resolves.toBeUndefined(),
      expect(waiting).rejects.toThrow(
        new BrokerUnavailableError('the bus closed before the message was handled'),
      ),
      expect(call).rejects.toBeInstanceOf(BrokerUnavailableError),
    ]);

    const closed = bus.close();
    expect(bus.isConnected()).toBe(true);
    await expect(bus.publish('capture', 'content.frames', buildBatch(3))).rejects.toThrow(
      new BrokerUnavailableError('the bus is closed'),
    );
    release();
    await closed;

    await outcomes;
    expect(bus.isConnected()).toBe(false);
    await expect(bus.queueDepth('content')).rejects.toBeInstanceOf(BrokerUnavailableError);
  });
});

describe('memory bus: topic binding patterns', () => {
  it.each([
    ['content.#', 'content.frames', true],
    ['content.#', 'content', true],
    ['content.#', 'content.frames.ocr', true],
    ['content.#', 'contents.frames', false],
    ['content.*', 'content.frames', true],
    ['content.*', 'content', false],
    ['content.*', 'content.frames.ocr', false],
    ['*.frames', 'content.frames', true],
    ['#.ocr', 'content.frames.ocr', true],
    ['#.ocr', 'ocr', true],
    ['a.#.z', 'a.z', true],
    ['a.#.z', 'a.b.c.z', true],
    ['a.#.z', 'a.b.c', false],
    ['#', 'anything.at.all', true],
    ['#', '', true],
    ['content.frames', 'content.frames', true],
    ['content.frames', 'content.audio', false],
  ])('when the binding is %p and the key %p, then it matches: %p', (pattern, key, expected) => {
    expect(topicMatches(pattern, key)).toBe(expected);
  });
});

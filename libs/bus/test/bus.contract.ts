import {
  BrokerUnavailableError,
  createEnvelope,
  DeviceUnavailableError,
  TimeoutError,
  type Envelope,
} from '@screenfleet/contracts';
import { DeviceTakenError, type Bus, type Delivery, type Outcome } from '@screenfleet/bus';
import { buildTopology, timed, waitForEvent, waitUntil, type TestTopology } from './support';

/**
 * One adapter of the Bus port, as the contract drives it. Every adapter passes the same suite
 * (ARCHITECTURE.md, "Ports"); what only one adapter can show (AMQP properties, reconnects, the
 * in-process confirm) stays in that adapter's own tests.
 */
export interface BusUnderTest {
  /**
   * What a resolved publish means. 'stored': the message is in its queues (a broker's confirm).
   * 'handled': every queue it reached has handled it (the memory bus, which has no disk). The
   * contract never relies on either: a test that needs messages waiting in a queue enqueues them
   * with `enqueue` below, and tests wait for the 'acked' event rather than for the publish.
   */
  confirms: 'stored' | 'handled';
  /**
   * A bus over t's topology (operator exchange t.operator). Buses started for the same topology
   * reach each other: on a broker two connections, in memory the one bus of the process.
   */
  startBus(t: TestTopology): Promise<Bus>;
  /** Starts collecting what reaches the dead-letter destination of t.queue. */
  watchDeadLetters(bus: Bus, t: TestTopology): Promise<DeadLetters>;
  /** Closes the buses and removes what the test created; runs after each test. */
  cleanup(): Promise<void>;
}

export interface DeadLetters {
  /** The dead letters, in order, once at least `count` arrived. */
  arrived(count: number): Promise<Envelope[]>;
}

interface Batch {
  items: string[];
}

interface Command {
  key: string;
}

const buildBatch = (items = ['a', 'b']) => createEnvelope<Batch>('content.batch', { items });
const buildRequest = (n: number) => createEnvelope('archive.command', { n });
const buildCommand = (key: string) => createEnvelope<Command>('operator.command', { key });
const replyTo = <T>(request: Envelope, payload: T) =>
  createEnvelope('operator.result', payload, { correlationId: request.correlation_id });
const summary = (deliveries: Array<Delivery<Batch>>) =>
  deliveries.map(({ redelivered, deliveryCount }) => ({ redelivered, deliveryCount }));

function record<T>(into: Array<Delivery<T>>, delivery: Delivery<T>, outcome: Outcome): Outcome {
  into.push(delivery);
  return outcome;
}

/** A promise and the function that resolves it: lets a test hold a handler where it wants. */
function latch(): { released: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { released, release };
}

export function describeBusContract(name: string, factory: () => BusUnderTest): void {
  const adapter = factory();

  /**
   * Publishes and returns once the message waits in its queue. With 'stored' confirms that is
   * the confirm. With 'handled' confirms the message is in its queue when publish returns, and
   * the confirm comes only once a consumer settles it: the promise is handed back for later
   * (a rejection at cleanup, when the bus closes with the message still unhandled, is expected).
   */
  async function enqueue(
    bus: Bus,
    exchange: string,
    routingKey: string,
    envelope: Envelope,
  ): Promise<{ confirmed: Promise<void> }> {
    const confirmed = bus.publish(exchange, routingKey, envelope);
    if (adapter.confirms === 'stored') {
      await confirmed;
      return { confirmed };
    }
    confirmed.catch(() => undefined);
    return { confirmed };
  }

  describe(`${name} bus: publish and consume`, () => {
    afterEach(() => adapter.cleanup());

    it('when a consumer acks, then it got the envelope exactly as published and the queue is empty', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);
      const received: Array<Delivery<Batch>> = [];
      await bus.consume<Batch>(
        t.queue,
        (delivery) => Promise.resolve(record(received, delivery, 'ack')),
        { prefetch: 5 },
      );
      const sent = buildBatch();
      const acked = waitForEvent(bus, 'acked', {
        match: (_, envelope) => envelope.message_id === sent.message_id,
      });

      await bus.publish(t.exchange, 'content.frames', sent);
      await acked;

      expect(received).toEqual([{ envelope: sent, redelivered: false, deliveryCount: 0 }]);
      expect(await bus.queueDepth(t.queue)).toBe(0);
    });

    it('when messages wait in a queue, then queueDepth counts them; a missing queue rejects without harming the bus', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);
      await enqueue(bus, t.exchange, 'content.frames', buildBatch());
      await enqueue(bus, t.exchange, 'content.frames', buildBatch());

      expect(await bus.queueDepth(t.queue)).toBe(2);
      await expect(bus.queueDepth(`${t.queue}-missing`)).rejects.toThrow(/NOT_FOUND/);
      await enqueue(bus, t.exchange, 'content.frames', buildBatch());
      expect(await bus.queueDepth(t.queue)).toBe(3);
    });

    it('when no queue is bound for a message, then publish rejects instead of confirming a dropped message', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);

      await expect(bus.publish(t.exchange, 'audio.raw', buildBatch())).rejects.toThrow(
        new BrokerUnavailableError(
          `no queue is bound for ${t.exchange}/audio.raw: the message was not stored`,
        ),
      );
      await enqueue(bus, t.exchange, 'content.frames', buildBatch());
      expect(await bus.queueDepth(t.queue)).toBe(1);
    });

    it('when messages waited before a consumer came, then it gets them in order, never more than prefetch at once', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);
      const sent = Array.from({ length: 6 }, (_, i) => buildBatch([`item-${i}`]));
      for (const envelope of sent) await enqueue(bus, t.exchange, 'content.frames', envelope);
      const started: string[] = [];
      let acked = 0;
      let running = 0;
      let mostRunning = 0;
      const allAcked = waitUntil(bus, 'acked', () => acked === sent.length);

      await bus.consume<Batch>(
        t.queue,
        async ({ envelope }) => {
          started.push(envelope.message_id);
          running += 1;
          mostRunning = Math.max(mostRunning, running);
          // Work that takes a while, so the next delivery arrives while this one runs.
          await new Promise((resolve) => setTimeout(resolve, 30));
          running -= 1;
          acked += 1;
          return 'ack';
        },
        { prefetch: 2 },
      );
      await allAcked;

      expect(mostRunning).toBe(2);
      expect(started).toEqual(sent.map((envelope) => envelope.message_id));
      expect(await bus.queueDepth(t.queue)).toBe(0);
    });

    it("when a handler answers 'retry', then the message comes back with an increasing deliveryCount", async () => {
      const t = buildTopology(5);
      const bus = await adapter.startBus(t);
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
      const bus = await adapter.startBus(t);
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

    it("when a handler answers 'dead', then the message goes to the dead letters at once", async () => {
      const t = buildTopology(5);
      const bus = await adapter.startBus(t);
      const handled: Array<Delivery<Batch>> = [];
      await bus.consume<Batch>(
        t.queue,
        (delivery) => Promise.resolve(record(handled, delivery, 'dead')),
        { prefetch: 1 },
      );
      const deadLetters = await adapter.watchDeadLetters(bus, t);
      const sent = buildBatch();
      const deadLettered = waitForEvent(bus, 'dead-lettered', {
        match: (queue) => queue === t.queue,
      });

      await bus.publish(t.exchange, 'content.frames', sent);
      await deadLettered;

      expect(await deadLetters.arrived(1)).toEqual([sent]);
      expect(handled).toHaveLength(1);
    });

    it('when a subscription is cancelled while its handler runs, then cancel waits for it, its ack counts, and the next message goes to another consumer', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);
      const first = buildBatch(['first']);
      const second = buildBatch(['second']);
      const { released, release } = latch();
      const started = latch();
      const order: string[] = [];
      const subscription = await bus.consume<Batch>(
        t.queue,
        async ({ envelope }) => {
          started.release();
          await released;
          order.push(`handled ${envelope.payload.items[0]}`);
          return 'ack';
        },
        { prefetch: 1 },
      );
      const firstAcked = waitForEvent(bus, 'acked', {
        match: (_, envelope) => envelope.message_id === first.message_id,
      });
      const confirmed = bus.publish(t.exchange, 'content.frames', first);
      await started.released;

      const cancelled = subscription.cancel().then(() => order.push('cancelled'));
      release();
      await Promise.all([cancelled, firstAcked, confirmed]);

      expect(order).toEqual(['handled first', 'cancelled']);
      await enqueue(bus, t.exchange, 'content.frames', second);
      expect(await bus.queueDepth(t.queue)).toBe(1);
      const later: Array<Delivery<Batch>> = [];
      const secondAcked = waitForEvent(bus, 'acked', {
        match: (_, envelope) => envelope.message_id === second.message_id,
      });
      await bus.consume<Batch>(
        t.queue,
        (delivery) => Promise.resolve(record(later, delivery, 'ack')),
        { prefetch: 1 },
      );
      await secondAcked;
      expect(later.map((delivery) => delivery.envelope)).toEqual([second]);
      expect(order).toEqual(['handled first', 'cancelled']);
    });
  });

  describe(`${name} bus: request/reply`, () => {
    afterEach(() => adapter.cleanup());

    it('when a server serves the queue, then call returns its reply', async () => {
      const t = buildTopology();
      const server = await adapter.startBus(t);
      const client = await adapter.startBus(t);
      await server.serve<{ n: number }, { doubled: number }>(t.rpcQueue, (request) =>
        Promise.resolve(replyTo(request, { doubled: request.payload.n * 2 })),
      );
      const request = buildRequest(21);

      const reply = await client.call<{ doubled: number }>(t.rpcQueue, request, {
        timeoutMs: 5000,
      });

      expect(reply.payload).toEqual({ doubled: 42 });
      expect(reply.correlation_id).toBe(request.correlation_id);
    });

    it('when nobody serves the queue, then call rejects TimeoutError naming the queue once the timeout passed', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);

      const { error, ms } = await timed(() =>
        bus.call(t.rpcQueue, buildRequest(1), { timeoutMs: 400 }),
      );

      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as Error).message).toBe(`no reply from queue "${t.rpcQueue}" within 400 ms`);
      expect(ms).toBeGreaterThanOrEqual(395);
      expect(ms).toBeLessThan(400 + 200);
    });

    it('when a request expired unserved, then a server started later never sees it', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);
      const stale = buildRequest(1);
      await expect(bus.call(t.rpcQueue, stale, { timeoutMs: 300 })).rejects.toBeInstanceOf(
        TimeoutError,
      );
      const served: string[] = [];
      await bus.serve(t.rpcQueue, (request) => {
        served.push(request.message_id);
        return Promise.resolve(replyTo(request, {}));
      });

      const fresh = buildRequest(2);
      await bus.call(t.rpcQueue, fresh, { timeoutMs: 5000 });

      // The queue is FIFO: had the stale request survived, it would have been served first.
      expect(served).toEqual([fresh.message_id]);
    });

    it('when served with prefetch above 1, then a quick request is answered while a slow one is in hand', async () => {
      const t = buildTopology();
      const server = await adapter.startBus(t);
      const client = await adapter.startBus(t);
      const { released, release } = latch();
      await server.serve<{ n: number }, { n: number }>(
        t.rpcQueue,
        async (request) => {
          if (request.payload.n === 1) await released;
          return replyTo(request, { n: request.payload.n });
        },
        { prefetch: 4 },
      );

      const slow = client.call<{ n: number }>(t.rpcQueue, buildRequest(1), { timeoutMs: 5000 });
      const quick = await client.call<{ n: number }>(t.rpcQueue, buildRequest(2), {
        timeoutMs: 2000,
      });
      release();

      expect(quick.payload).toEqual({ n: 2 });
      expect((await slow).payload).toEqual({ n: 1 });
    });
  });

  describe(`${name} bus: device commands`, () => {
    afterEach(() => adapter.cleanup());

    it('when no agent serves the device, then sendToDevice rejects DeviceUnavailableError long before the timeout', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);
      const returned = waitForEvent(bus, 'returned');

      const { error, ms } = await timed(() =>
        bus.sendToDevice('desk-nobody', buildCommand('a'), { timeoutMs: 5000 }),
      );

      expect(error).toBeInstanceOf(DeviceUnavailableError);
      expect((error as Error).message).toContain('desk-nobody');
      expect(ms).toBeLessThan(1000);
      expect((await returned)[0]).toBe('desk-nobody');
    });

    it('when two agents serve two devices, then each gets only its own commands and the sender gets the replies', async () => {
      const t = buildTopology();
      const gateway = await adapter.startBus(t);
      const agents = await adapter.startBus(t);
      const seen: Record<string, string[]> = { 'desk-a': [], 'desk-b': [] };
      for (const device of ['desk-a', 'desk-b']) {
        await agents.serveDevice<Command, { pressed: string; by: string }>(device, (command) => {
          seen[device]!.push(command.payload.key);
          return Promise.resolve(replyTo(command, { pressed: command.payload.key, by: device }));
        });
      }

      const replies = await Promise.all(
        [
          ['desk-a', 'a1'],
          ['desk-b', 'b1'],
          ['desk-a', 'a2'],
        ].map(([device, key]) =>
          gateway.sendToDevice<{ pressed: string; by: string }>(device!, buildCommand(key!), {
            timeoutMs: 5000,
          }),
        ),
      );

      expect(replies.map((reply) => reply.payload)).toEqual([
        { pressed: 'a1', by: 'desk-a' },
        { pressed: 'b1', by: 'desk-b' },
        { pressed: 'a2', by: 'desk-a' },
      ]);
      expect(seen).toEqual({ 'desk-a': ['a1', 'a2'], 'desk-b': ['b1'] });
    });

    it('when the agent does not answer in time, then sendToDevice rejects TimeoutError naming the device', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);
      const { released, release } = latch();
      const finished = waitForEvent(bus, 'acked').catch(() => undefined);
      await bus.serveDevice<Command, object>('desk-slow', async (command) => {
        await released;
        return replyTo(command, {});
      });

      const { error } = await timed(() =>
        bus.sendToDevice('desk-slow', buildCommand('a'), { timeoutMs: 300 }),
      );
      release();
      await finished;

      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as Error).message).toBe('device "desk-slow" did not answer within 300 ms');
    });

    it('when a second serve/consumer of the same device comes, then it is refused naming the device, commands still reach the first, and once the first stops the device can be served again', async () => {
      const t = buildTopology();
      const gateway = await adapter.startBus(t);
      const first = await adapter.startBus(t);
      const second = await adapter.startBus(t);
      const serve = (bus: Bus, by: string) =>
        bus.serveDevice<Command, { by: string }>('desk-twice', (command) =>
          Promise.resolve(replyTo(command, { by })),
        );
      const subscription = await serve(first, 'first');

      const refused = await serve(second, 'second').then(
        () => undefined,
        (error: unknown) => error,
      );
      const again = await serve(first, 'first again').then(
        () => undefined,
        (error: unknown) => error,
      );

      for (const error of [refused, again]) {
        expect(error).toBeInstanceOf(DeviceTakenError);
        expect((error as Error).message).toContain('device "desk-twice" is already served');
      }
      const replies = await Promise.all(
        ['a', 'b', 'c'].map((key) =>
          gateway.sendToDevice<{ by: string }>('desk-twice', buildCommand(key), {
            timeoutMs: 5000,
          }),
        ),
      );
      expect(replies.map((reply) => reply.payload.by)).toEqual(['first', 'first', 'first']);

      await subscription.cancel();
      await serve(second, 'second');
      const reply = await gateway.sendToDevice<{ by: string }>('desk-twice', buildCommand('d'), {
        timeoutMs: 5000,
      });
      expect(reply.payload.by).toBe('second');
    });

    it('when an agent stops serving, then its device becomes unavailable', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);
      const subscription = await bus.serveDevice<Command, object>('desk-gone', (command) =>
        Promise.resolve(replyTo(command, {})),
      );
      await bus.sendToDevice('desk-gone', buildCommand('a'), { timeoutMs: 5000 });

      await subscription.cancel();

      await expect(
        bus.sendToDevice('desk-gone', buildCommand('b'), { timeoutMs: 5000 }),
      ).rejects.toBeInstanceOf(DeviceUnavailableError);
    });

    it('when a stopped subscription of a device is cancelled again after the device is served anew, then the device stays taken', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);
      const serve = () =>
        bus.serveDevice<Command, object>('desk-again', (command) =>
          Promise.resolve(replyTo(command, {})),
        );
      const stopped = await serve();
      await stopped.cancel();
      await serve();

      await stopped.cancel();

      await expect(serve()).rejects.toBeInstanceOf(DeviceTakenError);
    });

    it('when the bus is closed, then serving a device it served rejects BrokerUnavailableError, not that another agent has it', async () => {
      const t = buildTopology();
      const bus = await adapter.startBus(t);
      await bus.serveDevice<Command, object>('desk-closed', (command) =>
        Promise.resolve(replyTo(command, {})),
      );

      await bus.close();

      await expect(
        bus.serveDevice('desk-closed', () => Promise.reject(new Error('never'))),
      ).rejects.toBeInstanceOf(BrokerUnavailableError);
    });
  });
}

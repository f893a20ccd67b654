import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  BrokerUnavailableError,
  createEnvelope,
  OutcomeUnknownError,
  type Envelope,
} from '@screenfleet/contracts';
import { DeviceTakenError, type Bus } from '@screenfleet/bus';
import { waitFor } from '@screenfleet/runtime';
import { closeBrokerConnections } from '../../../test/services';
import { buildTopology, TestBroker, timed, waitForEvent, waitUntil } from './support';

interface Batch {
  n: number;
}

const buildBatch = (n: number) => createEnvelope<Batch>('content.batch', { n });
const buildCommand = (key: string) => createEnvelope('operator.command', { key });

/** An agent on `bus` for `device` that answers every command with its own name. */
const serveAs = (bus: Bus, device: string, by: string) =>
  bus.serveDevice(device, (command) =>
    Promise.resolve(
      createEnvelope('operator.result', { by }, { correlationId: command.correlation_id }),
    ),
  );

describe('amqp bus: broker connection lost', () => {
  const broker = new TestBroker();
  afterEach(() => broker.cleanup());

  it('when the server closes the connection, then the bus reconnects, re-declares the topology and the consumer resumes', async () => {
    const t = buildTopology();
    const { bus, connectionName } = await broker.startBus(t);
    const received: Envelope[] = [];
    await bus.consume<Batch>(
      t.queue,
      ({ envelope }) => Promise.resolve(void received.push(envelope)).then(() => 'ack'),
      {
        prefetch: 10,
      },
    );
    // Only a re-declaration brings back the exchange and its binding: without them the
    // publish below fails (404) or is confirmed and dropped, and nothing arrives.
    await (await broker.adminChannel()).deleteExchange(t.exchange);
    const disconnected = waitForEvent(bus, 'disconnected');
    const connected = waitForEvent(bus, 'connected');

    expect(await closeBrokerConnections(connectionName)).toBe(1);
    const [reason] = await disconnected;
    await connected;

    expect(reason.message).toMatch(/CONNECTION_FORCED/);
    expect(bus.isConnected()).toBe(true);
    const sent = buildBatch(1);
    const acked = waitForEvent(bus, 'acked', {
      match: (_, envelope) => envelope.message_id === sent.message_id,
    });
    await bus.publish(t.exchange, 'content.frames', sent);
    await acked;
    expect(received).toEqual([sent]);
  });

  it('when the connection drops during a stream of publishes, then every confirmed message is delivered as sent and no message refused as not stored is delivered', async () => {
    const t = buildTopology();
    const { bus, connectionName } = await broker.startBus(t);
    const received = new Map<string, Envelope>();
    await bus.consume<Batch>(
      t.queue,
      ({ envelope }) =>
        Promise.resolve(void received.set(envelope.message_id, envelope)).then(() => 'ack'),
      {
        prefetch: 50,
      },
    );
    const confirmed: Envelope[] = [];
    const failures: Array<{ envelope: Envelope; error: unknown }> = [];
    let reconnected = false;
    let confirmedAfterReconnect = 0;
    let failed: Error | undefined;
    const disconnected = waitForEvent(bus, 'disconnected', { timeoutMs: 20_000 });
    const connectedAgain = disconnected.then(() => waitForEvent(bus, 'connected'));
    connectedAgain.then(
      () => (reconnected = true),
      (err: unknown) => (failed = err as Error),
    );
    const closing = closeBrokerConnections(connectionName);
    closing.catch((err: unknown) => (failed = err as Error));

    for (let n = 0; !reconnected || confirmedAfterReconnect < 20; n += 10) {
      if (failed) throw failed;
      const batch = Array.from({ length: 10 }, (_, i) => buildBatch(n + i));
      const results = await Promise.allSettled(
        batch.map((envelope) => bus.publish(t.exchange, 'content.frames', envelope)),
      );
      results.forEach((result, i) => {
        if (result.status === 'rejected')
          failures.push({ envelope: batch[i]!, error: result.reason });
        else {
          confirmed.push(batch[i]!);
          if (reconnected) confirmedAfterReconnect += 1;
        }
      });
      // Rejections settle in microtasks: let the socket and timers run between batches.
      await nextTurn();
    }
    expect(await closing).toBe(1);

    await waitUntil(bus, 'acked', () =>
      confirmed.every((envelope) => received.has(envelope.message_id)),
    );
    for (const envelope of confirmed) expect(received.get(envelope.message_id)).toEqual(envelope);
    expect(confirmed.length).toBeGreaterThan(0);
    // A marker published now reaches the consumer after everything the broker kept before it
    // (one queue, one consumer): once it is in, a refused message that was stored would be too.
    const marker = buildBatch(-1);
    await bus.publish(t.exchange, 'content.frames', marker);
    await waitUntil(bus, 'acked', () => received.has(marker.message_id));
    for (const { envelope, error } of failures) {
      // Not stored (safe to send again) or unknown (it may be stored): never anything else.
      expect([BrokerUnavailableError, OutcomeUnknownError]).toContain(
        (error as object).constructor,
      );
      if (error instanceof BrokerUnavailableError)
        expect(received.has(envelope.message_id)).toBe(false);
    }
  });

  it('when the connection is down, then publish and call reject BrokerUnavailableError at once', async () => {
    const t = buildTopology();
    const { bus, connectionName } = await broker.startBus(t, {
      reconnect: { initialMs: 2000, maxMs: 4000 },
    });
    const disconnected = waitForEvent(bus, 'disconnected');
    await closeBrokerConnections(connectionName);
    await disconnected;
    const connected = waitForEvent(bus, 'connected');

    const publish = await timed(() => bus.publish(t.exchange, 'content.frames', buildBatch(1)));
    const call = await timed(() => bus.call(t.rpcQueue, buildBatch(2), { timeoutMs: 5000 }));

    expect(bus.isConnected()).toBe(false);
    expect(publish.error).toBeInstanceOf(BrokerUnavailableError);
    expect(publish.ms).toBeLessThan(100);
    expect(call.error).toBeInstanceOf(BrokerUnavailableError);
    expect(call.ms).toBeLessThan(100);
    await connected;
    await expect(bus.publish(t.exchange, 'content.frames', buildBatch(3))).resolves.toBeUndefined();
  });

  it('when a channel error closes the publish channel, then only that channel is reopened', async () => {
    const t = buildTopology();
    const { bus } = await broker.startBus(t);
    const disconnected = jest.fn();
    bus.events.on('disconnected', disconnected);
    const reopened = waitForEvent(bus, 'channel-reopened');

    // A publish to a missing exchange makes the broker close the channel (404 NOT_FOUND).
    const missing = await timed(() => bus.publish(`${t.exchange}-missing`, 'x', buildBatch(1)));
    const [channel] = await reopened;

    expect(missing.error).toBeInstanceOf(BrokerUnavailableError);
    expect((missing.error as Error).message).toMatch(/NOT_FOUND/);
    expect(channel).toBe('publish');
    await expect(bus.publish(t.exchange, 'content.frames', buildBatch(2))).resolves.toBeUndefined();
    expect(disconnected).not.toHaveBeenCalled();
    expect(bus.isConnected()).toBe(true);
  });

  it("when the server closes an agent's connection, then it reconnects and serves its device again from the same named queue", async () => {
    const t = buildTopology();
    const { bus: gateway } = await broker.startBus(t);
    const { bus: agent, connectionName } = await broker.startBus(t);
    const device = 'desk-reconnect';
    await serveAs(agent, device, 'agent');
    const connected = waitForEvent(agent, 'connected');

    expect(await closeBrokerConnections(connectionName)).toBe(1);
    await connected;

    const reply = await gateway.sendToDevice<{ by: string }>(device, buildCommand('a'), {
      timeoutMs: 5000,
    });
    expect(reply.payload.by).toBe('agent');
  });

  it('when another agent took the device while this one was cut off, then this one keeps retrying without taking a command, and serves the device once the other stops', async () => {
    const t = buildTopology();
    const { bus: gateway } = await broker.startBus(t);
    // The first agent's failed reconnects, as its log says them.
    const refusals: unknown[] = [];
    const quiet = () => undefined;
    const logger = {
      debug: quiet,
      info: quiet,
      error: quiet,
      warn: (details: object, message?: string) => {
        if (message === 'reconnect failed') refusals.push((details as { err?: unknown }).err);
      },
    };
    const { bus: first, connectionName } = await broker.startBus(t, {
      // Slow enough for the second agent to take the device before the first tries again.
      reconnect: { initialMs: 1000, maxMs: 1000 },
      logger,
    });
    const { bus: second } = await broker.startBus(t);
    const device = 'desk-contended';
    await serveAs(first, device, 'first');
    const disconnected = waitForEvent(first, 'disconnected');
    expect(await closeBrokerConnections(connectionName)).toBe(1);
    await disconnected;
    // The broker dropped the first agent's queue with its connection: the second may take it.
    const secondServes = await serveAs(second, device, 'second');

    await waitFor(() => refusals.length >= 2, {
      timeoutMs: 10_000,
      what: "two of the first agent's reconnects to fail",
    });
    for (const err of refusals) expect(err).toBeInstanceOf(DeviceTakenError);
    expect(first.isConnected()).toBe(false);
    const held = await gateway.sendToDevice<{ by: string }>(device, buildCommand('b'), {
      timeoutMs: 5000,
    });
    expect(held.payload.by).toBe('second');

    const connected = waitForEvent(first, 'connected');
    await secondServes.cancel();
    await connected;
    const taken = await gateway.sendToDevice<{ by: string }>(device, buildCommand('c'), {
      timeoutMs: 5000,
    });
    expect(taken.payload.by).toBe('first');
  });
});

import {
  createEnvelope,
  DeviceUnavailableError,
  TimeoutError,
  type Envelope,
} from '@screenfleet/contracts';
import { buildTopology, TestBroker, timed, waitForEvent } from './support';

interface Command {
  key: string;
}

const buildRequest = (n: number) => createEnvelope('archive.command', { n });
const buildCommand = (key: string) => createEnvelope<Command>('operator.command', { key });
const replyTo = <T>(request: Envelope, payload: T) =>
  createEnvelope('operator.result', payload, { correlationId: request.correlation_id });

describe('amqp bus: request/reply', () => {
  const broker = new TestBroker();
  afterEach(() => broker.cleanup());

  it('when a server serves the queue, then call returns its reply', async () => {
    const t = buildTopology();
    const { bus: server } = await broker.startBus(t);
    const { bus: client } = await broker.startBus(t);
    await server.serve<{ n: number }, { doubled: number }>(t.rpcQueue, (request) =>
      Promise.resolve(replyTo(request, { doubled: request.payload.n * 2 })),
    );
    const request = buildRequest(21);

    const reply = await client.call<{ doubled: number }>(t.rpcQueue, request, { timeoutMs: 5000 });

    expect(reply.payload).toEqual({ doubled: 42 });
    expect(reply.correlation_id).toBe(request.correlation_id);
  });

  it('when nobody serves the queue, then call rejects TimeoutError naming the queue once the timeout passed', async () => {
    const t = buildTopology();
    const { bus } = await broker.startBus(t);

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
    const { bus } = await broker.startBus(t);
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
    const { bus: server } = await broker.startBus(t);
    const { bus: client } = await broker.startBus(t);
    let releaseSlow = () => {};
    const slowHeld = new Promise<void>((resolve) => (releaseSlow = resolve));
    await server.serve<{ n: number }, { n: number }>(
      t.rpcQueue,
      async (request) => {
        if (request.payload.n === 1) await slowHeld;
        return replyTo(request, { n: request.payload.n });
      },
      { prefetch: 4 },
    );

    const slow = client.call<{ n: number }>(t.rpcQueue, buildRequest(1), { timeoutMs: 5000 });
    const quick = await client.call<{ n: number }>(t.rpcQueue, buildRequest(2), {
      timeoutMs: 2000,
    });
    releaseSlow();

    expect(quick.payload).toEqual({ n: 2 });
    expect((await slow).payload).toEqual({ n: 1 });
  });
});

describe('amqp bus: device commands', () => {
  const broker = new TestBroker();
  afterEach(() => broker.cleanup());

  it('when no agent serves the device, then sendToDevice rejects DeviceUnavailableError long before the timeout', async () => {
    const t = buildTopology();
    const { bus } = await broker.startBus(t);
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
    const { bus: gateway } = await broker.startBus(t);
    const { bus: agents } = await broker.startBus(t);
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
    const { bus } = await broker.startBus(t);
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const started = waitForEvent(bus, 'acked').catch(() => undefined);
    await bus.serveDevice<Command, object>('desk-slow', async (command) => {
      await released;
      return replyTo(command, {});
    });

    const { error } = await timed(() =>
      bus.sendToDevice('desk-slow', buildCommand('a'), { timeoutMs: 300 }),
    );
    release();
    await started;

    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toBe('device "desk-slow" did not answer within 300 ms');
  });

  it('when an agent stops serving, then its device becomes unavailable', async () => {
    const t = buildTopology();
    const { bus } = await broker.startBus(t);
    const subscription = await bus.serveDevice<Command, object>('desk-gone', (command) =>
      Promise.resolve(replyTo(command, {})),
    );
    await bus.sendToDevice('desk-gone', buildCommand('a'), { timeoutMs: 5000 });

    await subscription.cancel();

    await expect(
      bus.sendToDevice('desk-gone', buildCommand('b'), { timeoutMs: 5000 }),
    ).rejects.toBeInstanceOf(DeviceUnavailableError);
  });
});

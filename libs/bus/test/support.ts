import { connect, type Channel, type ChannelModel } from 'amqplib';
import type { Topology } from '@screenfleet/contracts';
import { createAmqpBus, type AmqpBusOptions, type Bus, type BusEvents } from '@screenfleet/bus';
import { brokerUrl, uniqueName } from '../../../test/services';

/** A topology shaped like the system's, with names no other test uses. */
export function buildTopology(deliveryLimit = 2) {
  const names = {
    exchange: uniqueName('bus-capture'),
    deadExchange: uniqueName('bus-capture-dead'),
    operator: uniqueName('bus-operator'),
    queue: uniqueName('bus-content'),
    deadQueue: uniqueName('bus-content-dead'),
    rpcQueue: uniqueName('bus-rpc'),
  };
  const topology: Topology = {
    exchanges: [
      { name: names.exchange, type: 'topic' },
      { name: names.deadExchange, type: 'fanout' },
      { name: names.operator, type: 'direct' },
    ],
    queues: [
      {
        name: names.queue,
        arguments: {
          'x-queue-type': 'quorum',
          'x-delivery-limit': deliveryLimit,
          'x-dead-letter-exchange': names.deadExchange,
        },
      },
      { name: names.deadQueue, arguments: { 'x-queue-type': 'quorum' } },
      { name: names.rpcQueue, arguments: { 'x-queue-type': 'classic' } },
    ],
    bindings: [
      { queue: names.queue, exchange: names.exchange, routingKey: 'content.#' },
      { queue: names.deadQueue, exchange: names.deadExchange, routingKey: '' },
    ],
  };
  return { ...names, topology };
}

export type TestTopology = ReturnType<typeof buildTopology>;

/** Buses and broker objects a test created, closed and deleted after it whatever happened. */
export class TestBroker {
  private readonly buses: Bus[] = [];
  private readonly topologies: Topology[] = [];
  private admin: { model: ChannelModel; channel: Channel } | undefined;

  async startBus(topology: TestTopology, overrides: Partial<AmqpBusOptions> = {}) {
    const connectionName = uniqueName('bus-test');
    this.topologies.push(topology.topology);
    const bus = await createAmqpBus({
      url: brokerUrl(),
      topology: topology.topology,
      connectionName,
      operatorExchange: topology.operator,
      reconnect: { initialMs: 50, maxMs: 1000 },
      publishTimeoutMs: 5000,
      ...overrides,
    });
    this.buses.push(bus);
    return { bus, connectionName };
  }

  /** A plain amqplib channel, for what the Bus deliberately cannot do (raw reads, deletes). */
  async adminChannel(): Promise<Channel> {
    if (!this.admin) {
      const model = await connect(brokerUrl());
      model.on('error', () => undefined);
      const channel = await model.createChannel();
      channel.on('error', () => undefined);
      this.admin = { model, channel };
    }
    return this.admin.channel;
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.buses.splice(0).map((bus) => bus.close()));
    const channel = await this.adminChannel();
    for (const topology of this.topologies.splice(0)) {
      for (const queue of topology.queues) await channel.deleteQueue(queue.name);
      for (const exchange of topology.exchanges) await channel.deleteExchange(exchange.name);
    }
    await this.admin?.model.close();
    this.admin = undefined;
  }
}

/**
 * Resolves with the first `name` event whose arguments match, rejects after timeoutMs. Create
 * it before the action that should cause the event.
 */
export function waitForEvent<K extends keyof BusEvents>(
  bus: Bus,
  name: K,
  options: { timeoutMs?: number; match?: (...args: BusEvents[K]) => boolean } = {},
): Promise<BusEvents[K]> {
  const { timeoutMs = 10_000, match = () => true } = options;
  const emitter = bus.events as unknown as NodeJS.EventEmitter;
  return new Promise((resolve, reject) => {
    const listener = (...args: unknown[]) => {
      if (!match(...(args as BusEvents[K]))) return;
      clearTimeout(timer);
      emitter.off(name, listener);
      resolve(args as BusEvents[K]);
    };
    const timer = setTimeout(() => {
      emitter.off(name, listener);
      reject(new Error(`no matching '${name}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    emitter.on(name, listener);
  });
}

/** Resolves once `done()` holds, checking after each `name` event; rejects after timeoutMs. */
export function waitUntil<K extends keyof BusEvents>(
  bus: Bus,
  name: K,
  done: () => boolean,
  timeoutMs = 10_000,
): Promise<void> {
  if (done()) return Promise.resolve();
  return waitForEvent(bus, name, { timeoutMs, match: () => done() }).then(() => undefined);
}

/** How long an operation took to settle, and how. */
export async function timed<T>(operation: () => Promise<T>) {
  const started = performance.now();
  try {
    const value = await operation();
    return { value, error: undefined, ms: performance.now() - started };
  } catch (error) {
    return { value: undefined, error, ms: performance.now() - started };
  }
}

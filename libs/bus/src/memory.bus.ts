import { EventEmitter } from 'node:events';
import {
  AppError,
  BrokerUnavailableError,
  deviceQueueName,
  exchangeNames,
  NotFoundError,
  sizeLimits,
  TimeoutError,
  type BindingSpec,
  type Envelope,
  type ExchangeSpec,
  type Topology,
} from '@screenfleet/contracts';
import type { Bus, BusEvents, ConsumeOptions, DeliveryHandler, Outcome } from './bus';
import type { RequestDeadline, RequestHandler, RequestTimes, Subscription } from './bus';
import {
  answerRequest,
  callDeadline,
  DEVICE_PREFETCH,
  deviceDeadline,
  deviceUnavailable,
  SERVE_PREFETCH,
} from './bus';
import { DeviceTakenError } from './device-taken';
import { componentLogger, silentLogger, type Logger } from './logger';
import {
  Caller,
  Confirm,
  DEFAULT_DELIVERY_LIMIT,
  DEFAULT_OUTCOME_TIMEOUT_MS,
  deliveryLimitOf,
  MemoryConsumer,
  MemoryQueue,
  type DeadLetterReason,
  type DeadLetterSink,
  type Handle,
  type QueuedMessage,
} from './memory.queue';
import { decodeEnvelope, encodeEnvelope, readOwnEnvelope } from './message.codec';

export { DEFAULT_DELIVERY_LIMIT, type DeadLetterReason, type DeadLetterSink };

// The in-process Bus and its routing (exchange and routing key to queues, as the broker does it,
// at the end of this file). What happens in a queue, delivery and outcomes, is memory.queue.ts.

export interface MemoryBusOptions {
  /** The same topology the amqp bus asserts: exchanges, queues with their arguments, bindings. */
  topology: Topology;
  /**
   * Where dead letters go (the embedded mode stores them in its SQLite file). Default: kept in
   * this process's memory, so lost with it: for tests and throwaway runs only.
   */
  deadLetter?: DeadLetterSink;
  logger?: Logger;
  /** The direct exchange device commands go through; must be in the topology. */
  operatorExchange?: string;
  /** Largest message body published; default sizeLimits.maxMessageBytes, as the amqp bus. */
  maxMessageBytes?: number;
  /**
   * How long a publish waits for a handler to take its message. A message no handler holds by
   * then is withdrawn and the publish rejects BrokerUnavailableError: nothing was stored, so the
   * caller may say "try later". Default: no limit, the wait ends with the handling or close().
   */
  publishTimeoutMs?: number;
  /**
   * Once that time has passed with a handler holding the message, how much longer the publish
   * waits for the handler's outcome before it rejects OutcomeUnknownError (the handler may still
   * store it). A handler that gives the message back meanwhile ('retry') stored nothing: the
   * publish then rejects BrokerUnavailableError. Default 30 s.
   */
  outcomeTimeoutMs?: number;
}

/**
 * The Bus in one process, for the embedded mode: the same topology, routing (topic `*` / `#`,
 * direct, fanout), outcomes, delivery limit, RPC and device semantics as the amqp bus, with no
 * broker and nothing written to disk.
 *
 * Confirms mean "handled", not "stored". A broker confirms a publish once the message is on its
 * disk; this bus has no disk, so `publish` resolves only once every queue the message was routed
 * to has had it handled: a consumer answered 'ack', or it was dead-lettered and the dead-letter
 * sink stored it. A consumer acks only after its effect is durable, so a resolved publish is
 * durable; if the process dies before that, its publisher (in this same process) never got the
 * confirm, so nothing that was acknowledged is lost. Consequences: a publish waits while no
 * consumer takes its queue (until publishTimeoutMs or close()), and a handler must not await a
 * publish that only its own subscription could handle.
 *
 * The message is in its queues as soon as `publish` returns (before the promise settles).
 * Handlers get a JSON round-tripped copy of the envelope, as if it crossed a broker.
 *
 * Not like the broker: dead letters go to the sink, not through `x-dead-letter-exchange` to a
 * dead-letter queue; a stream queue (`x-queue-type: stream`) keeps no entries, it hands each
 * message to the subscriptions open at the time, and a publish to it resolves at once (a stream
 * keeps its entries whatever consumers answer); 'retry' puts a message at the back of its queue.
 */
export function createMemoryBus(options: MemoryBusOptions): Bus {
  return new MemoryBus(options);
}

class MemoryBus implements Bus {
  readonly events = new EventEmitter<BusEvents>();
  private readonly logger: Logger;
  private readonly routes: MemoryRoutes;
  private readonly consumers = new Set<MemoryConsumer>();
  private readonly confirms = new Set<Confirm>();
  private readonly callers = new Map<string, Caller>();
  private readonly deadLetter: DeadLetterSink;
  private readonly operatorExchange: string;
  private readonly maxMessageBytes: number;
  private sequence = 0;
  private closed = false;
  private closing: Promise<void> | undefined;
  private connected = true;

  constructor(private readonly options: MemoryBusOptions) {
    this.logger = componentLogger(options.logger ?? silentLogger, 'bus');
    this.operatorExchange = options.operatorExchange ?? exchangeNames.operator;
    this.maxMessageBytes = options.maxMessageBytes ?? sizeLimits.maxMessageBytes;
    const kept: Array<{ queue: string; envelope: Envelope; reason: DeadLetterReason }> = [];
    this.deadLetter =
      options.deadLetter ??
      ((queue, envelope, reason) => {
        kept.push({ queue, envelope, reason });
        return Promise.resolve();
      });
    this.routes = new MemoryRoutes(options.topology);
  }

  isConnected(): boolean {
    return this.connected;
  }

  queueDepth(queue: string): Promise<number> {
    return new Promise((resolve) => {
      this.assertOpen();
      resolve(this.routes.queueNamed(queue).ready.length);
    });
  }

  async publish(exchange: string, routingKey: string, envelope: Envelope): Promise<void> {
    this.assertOpen();
    const body = encodeEnvelope(envelope, this.maxMessageBytes);
    const queues = this.routes.route(exchange, routingKey);
    if (queues.length === 0)
      throw new BrokerUnavailableError(
        `no queue is bound for ${exchange}/${routingKey}: the message was not stored`,
      );
    const seq = this.sequence++;
    for (const stream of queues.filter((queue) => queue.kind === 'stream'))
      for (const reader of stream.readers)
        reader.enqueue({ body, seq, deliveryCount: 0, redelivered: false });
    const lasting = queues.filter((queue) => queue.kind !== 'stream');
    if (lasting.length === 0) return;

    const confirm = new Confirm(lasting.length);
    for (const queue of lasting)
      queue.enqueue({ body, seq, deliveryCount: 0, redelivered: false, confirm });
    const timeoutMs = this.options.publishTimeoutMs;
    if (timeoutMs !== undefined)
      confirm.after(timeoutMs, () =>
        confirm.expire(timeoutMs, this.options.outcomeTimeoutMs ?? DEFAULT_OUTCOME_TIMEOUT_MS),
      );
    this.confirms.add(confirm);
    try {
      await confirm.promise;
    } finally {
      this.confirms.delete(confirm);
    }
  }

  consume<T>(
    queue: string,
    handler: DeliveryHandler<T>,
    options: ConsumeOptions,
  ): Promise<Subscription> {
    return new Promise((resolve) => {
      this.assertOpen();
      const source = this.routes.queueNamed(queue);
      const handle: Handle = (envelope, message) =>
        handler({
          envelope: envelope as Envelope<T>,
          redelivered: message.redelivered,
          deliveryCount: message.deliveryCount,
        });
      if (source.kind !== 'stream') {
        resolve(this.subscribe(source, options.prefetch, options.maxBytesInFlight, handle));
        return;
      }
      // Every subscription reads every entry of a stream, from the moment it subscribed.
      const reader = new MemoryQueue(source.name, 'reader', source.deliveryLimit);
      source.readers.add(reader);
      resolve(
        this.subscribe(reader, options.prefetch, options.maxBytesInFlight, handle, () =>
          source.readers.delete(reader),
        ),
      );
    });
  }

  async call<Res>(queue: string, request: Envelope, options: RequestTimes): Promise<Envelope<Res>> {
    const reply = await this.request('', queue, request, {
      ...callDeadline(queue, options),
      unavailable: () => new BrokerUnavailableError(`the queue "${queue}" was deleted`),
    });
    return reply as Envelope<Res>;
  }

  serve<Req, Res>(
    queue: string,
    handler: RequestHandler<Req, Res>,
    options: { prefetch?: number } = {},
  ): Promise<Subscription> {
    return new Promise((resolve) => {
      this.assertOpen();
      const source = this.routes.queueNamed(queue);
      resolve(
        this.subscribe(source, options.prefetch ?? SERVE_PREFETCH, undefined, (envelope, message) =>
          this.answer(queue, envelope as Envelope<Req>, message, handler),
        ),
      );
    });
  }

  async sendToDevice<Res>(
    device: string,
    command: Envelope,
    options: RequestTimes,
  ): Promise<Envelope<Res>> {
    const reply = await this.request(this.operatorExchange, device, command, {
      ...deviceDeadline(device, options),
      unavailable: () => deviceUnavailable(device),
    });
    return reply as Envelope<Res>;
  }

  serveDevice<Req, Res>(device: string, handler: RequestHandler<Req, Res>): Promise<Subscription> {
    return new Promise((resolve) => {
      this.assertOpen();
      if (!this.routes.hasExchange(this.operatorExchange))
        throw new NotFoundError(`NOT_FOUND - no exchange '${this.operatorExchange}'`);
      // The device's queue, gone with its subscription: "no queue bound" is how senders learn
      // the agent is offline, and a queue already there that another agent serves the device.
      const name = deviceQueueName(device, this.operatorExchange);
      if (this.routes.hasQueue(name)) throw new DeviceTakenError(device, name);
      const queue = new MemoryQueue(name, 'device', DEFAULT_DELIVERY_LIMIT);
      this.routes.addBoundQueue(queue, this.operatorExchange, device);
      const server = `device ${device}`;
      resolve(
        this.subscribe(
          queue,
          DEVICE_PREFETCH,
          undefined,
          (envelope, message) => this.answer(server, envelope as Envelope<Req>, message, handler),
          () => this.routes.removeQueue(queue),
        ),
      );
    });
  }

  /**
   * Stops consuming and waits for the running handlers (their outcomes count), then fails what
   * is left: publishes not handled reject BrokerUnavailableError, as do calls not answered.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.consumers].map((consumer) => consumer.cancel()));
    for (const confirm of this.confirms)
      confirm.reject(new BrokerUnavailableError('the bus closed before the message was handled'));
    for (const caller of this.callers.values())
      caller.reject(new BrokerUnavailableError('the bus closed before the request was answered'));
    for (const queue of this.routes.allQueues()) queue.ready.length = 0;
    this.connected = false;
  }

  private subscribe(
    queue: MemoryQueue,
    prefetch: number,
    maxBytesInFlight: number | undefined,
    handle: Handle,
    onCancel?: () => void,
  ): Subscription {
    const settlement = { events: this.events, logger: this.logger, deadLetter: this.deadLetter };
    const consumer = new MemoryConsumer(
      queue,
      prefetch,
      maxBytesInFlight,
      handle,
      settlement,
      () => {
        this.consumers.delete(consumer);
        onCancel?.();
      },
    );
    this.consumers.add(consumer);
    queue.add(consumer);
    return { cancel: () => consumer.cancel() };
  }

  private request(
    exchange: string,
    routingKey: string,
    envelope: Envelope,
    options: RequestDeadline & {
      /** The error for a request whose queue went before anyone took it (an agent stopped). */
      unavailable: () => Error;
    },
  ): Promise<Envelope> {
    this.assertOpen();
    const id = envelope.message_id;
    if (this.callers.has(id))
      throw new AppError('conflict', `a request with message id ${id} is already waiting`);
    const body = encodeEnvelope(envelope);
    const queues = this.routes
      .route(exchange, routingKey)
      .filter((queue) => queue.kind !== 'stream');
    if (queues.length === 0 && options.unroutable) {
      this.events.emit('returned', routingKey, readOwnEnvelope(body));
      throw options.unroutable();
    }
    const caller = new Caller(options.unavailable);
    // No server: the request waits until one comes or the caller gives up, and never after.
    caller.after(options.timeoutMs, () => caller.reject(new TimeoutError(options.timeoutMessage)));
    const expirationMs = options.expirationMs ?? options.timeoutMs;
    if (expirationMs < options.timeoutMs) caller.after(expirationMs, () => caller.withdraw());
    const seq = this.sequence++;
    for (const queue of queues)
      queue.enqueue({ body, seq, deliveryCount: 0, redelivered: false, caller });
    this.callers.set(id, caller);
    return caller.promise.finally(() => this.callers.delete(id));
  }

  /** Serves one request; the reply goes, as it would over the wire, to the caller waiting. */
  private answer<Req, Res>(
    server: string,
    request: Envelope<Req>,
    message: QueuedMessage,
    handler: RequestHandler<Req, Res>,
  ): Promise<Outcome> {
    const { caller } = message;
    const send = caller
      ? (reply: Envelope<Res>) => {
          const decoded = decodeEnvelope(encodeEnvelope(reply));
          if (decoded) caller.resolve(decoded);
          else caller.reject(new AppError('operation_failed', 'the reply is not a valid envelope'));
        }
      : undefined;
    return answerRequest(this.logger, server, request, handler, send);
  }

  private assertOpen(): void {
    if (this.closed) throw new BrokerUnavailableError('the bus is closed');
  }
}

/**
 * The in-process bus's exchanges, queues and bindings: the topology the amqp bus asserts, held
 * as the broker would hold it, and the queues a message reaches through them.
 */
class MemoryRoutes {
  private readonly exchanges = new Map<string, ExchangeSpec['type']>();
  private readonly queues = new Map<string, MemoryQueue>();
  private readonly bindings: BindingSpec[];

  constructor(topology: Topology) {
    for (const exchange of topology.exchanges) this.exchanges.set(exchange.name, exchange.type);
    for (const queue of topology.queues) {
      const kind = queue.arguments['x-queue-type'] === 'stream' ? 'stream' : 'queue';
      this.queues.set(queue.name, new MemoryQueue(queue.name, kind, deliveryLimitOf(queue)));
    }
    for (const binding of topology.bindings) {
      // The broker refuses these when the topology is asserted: a start failure either way.
      if (!this.exchanges.has(binding.exchange) || !this.queues.has(binding.queue))
        throw new NotFoundError(
          `NOT_FOUND - the topology binds ${binding.queue} to ${binding.exchange}, which it does not declare`,
        );
    }
    this.bindings = topology.bindings.map((binding) => ({ ...binding }));
  }

  /** The queues a message reaches; throws as the broker's 404 for an unknown exchange. */
  route(exchange: string, routingKey: string): MemoryQueue[] {
    if (exchange === '') {
      const queue = this.queues.get(routingKey);
      return queue ? [queue] : [];
    }
    const type = this.exchanges.get(exchange);
    if (!type)
      throw new BrokerUnavailableError(
        `the broker did not take the message: NOT_FOUND - no exchange '${exchange}'`,
      );
    const reached = new Set<MemoryQueue>();
    for (const binding of this.bindings) {
      if (binding.exchange !== exchange || !bindingMatches(type, binding.routingKey, routingKey))
        continue;
      const queue = this.queues.get(binding.queue);
      if (queue) reached.add(queue);
    }
    return [...reached];
  }

  queueNamed(name: string): MemoryQueue {
    const queue = this.queues.get(name);
    if (!queue) throw new NotFoundError(`NOT_FOUND - no queue '${name}'`);
    return queue;
  }

  hasQueue(name: string): boolean {
    return this.queues.has(name);
  }

  hasExchange(name: string): boolean {
    return this.exchanges.has(name);
  }

  allQueues(): Iterable<MemoryQueue> {
    return this.queues.values();
  }

  /** A queue declared at run time (a device agent's), bound with one routing key. */
  addBoundQueue(queue: MemoryQueue, exchange: string, routingKey: string): void {
    this.queues.set(queue.name, queue);
    this.bindings.push({ queue: queue.name, exchange, routingKey });
  }

  /** The queue and its bindings go; what it still held is its own to fail. */
  removeQueue(queue: MemoryQueue): void {
    this.queues.delete(queue.name);
    for (let i = this.bindings.length - 1; i >= 0; i--)
      if (this.bindings[i]!.queue === queue.name) this.bindings.splice(i, 1);
    queue.delete();
  }
}

/** Whether a binding of an exchange of this type takes a message with this routing key. */
function bindingMatches(type: ExchangeSpec['type'], pattern: string, routingKey: string): boolean {
  switch (type) {
    case 'fanout':
      return true;
    case 'direct':
      return pattern === routingKey;
    case 'topic':
      return topicMatches(pattern, routingKey);
  }
}

/**
 * AMQP topic matching, as RabbitMQ does it: words are separated by dots, `*` stands for exactly
 * one word and `#` for zero or more (so `content.#` matches `content` and `content.frames.x`).
 */
export function topicMatches(pattern: string, routingKey: string): boolean {
  const wanted = pattern.split('.');
  const words = routingKey.split('.');
  // (pattern word, key word) pairs already answered: `#` would otherwise retry them many times.
  const known = new Map<number, boolean>();
  const matchFrom = (p: number, k: number): boolean => {
    if (p === wanted.length) return k === words.length;
    const key = p * (words.length + 1) + k;
    const cached = known.get(key);
    if (cached !== undefined) return cached;
    const word = wanted[p];
    const result =
      word === '#'
        ? matchFrom(p + 1, k) || (k < words.length && matchFrom(p, k + 1))
        : k < words.length && (word === '*' || word === words[k]) && matchFrom(p + 1, k + 1);
    known.set(key, result);
    return result;
  };
  return matchFrom(0, 0);
}

import { EventEmitter } from 'node:events';
import {
  AppError,
  BrokerUnavailableError,
  DeviceUnavailableError,
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
import type { Bus, BusEvents, Delivery, Outcome, Subscription } from './bus';
import { DeviceTakenError } from './device-taken';
import { componentLogger, silentLogger, type Logger } from './logger';
import {
  DEFAULT_DELIVERY_LIMIT,
  deliveryLimitOf,
  MemoryConsumer,
  MemoryQueue,
  type Handle,
} from './memory.queue';
import { bindingMatches } from './memory.routing';
import { Caller, Confirm, DEFAULT_OUTCOME_TIMEOUT_MS, type QueuedMessage } from './memory.message';
import { decodeEnvelope, MessageTooLargeError } from './message.codec';
import { answerRequest } from './request-reply';

export { DEFAULT_DELIVERY_LIMIT };

/** Why a message was dead-lettered, in RabbitMQ's x-death words. */
export type DeadLetterReason = 'rejected' | 'delivery_limit';

/**
 * Takes a dead letter for good; resolves only once it is stored. The message counts as handled
 * (its publisher's confirm may resolve) only then; a rejection fails the publish instead.
 */
export type DeadLetterSink = (
  queue: string,
  envelope: Envelope,
  reason: DeadLetterReason,
) => Promise<void>;

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

/** By default requests are served one after another, as the amqp bus does. */
const SERVE_PREFETCH = 1;

class MemoryBus implements Bus {
  readonly events = new EventEmitter<BusEvents>();
  private readonly logger: Logger;
  private readonly exchanges = new Map<string, ExchangeSpec['type']>();
  private readonly queues = new Map<string, MemoryQueue>();
  private readonly bindings: BindingSpec[];
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
    const { topology } = options;
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

  isConnected(): boolean {
    return this.connected;
  }

  queueDepth(queue: string): Promise<number> {
    return new Promise((resolve) => {
      this.assertOpen();
      resolve(this.queueNamed(queue).ready.length);
    });
  }

  async publish(exchange: string, routingKey: string, envelope: Envelope): Promise<void> {
    this.assertOpen();
    const body = JSON.stringify(envelope);
    const bytes = Buffer.byteLength(body);
    if (bytes > this.maxMessageBytes) throw new MessageTooLargeError(bytes, this.maxMessageBytes);
    const queues = this.route(exchange, routingKey);
    if (queues.length === 0)
      throw new BrokerUnavailableError(
        `no queue is bound for ${exchange}/${routingKey}: the message was not stored`,
      );
    const seq = this.sequence++;
    for (const stream of queues.filter((queue) => queue.kind === 'stream'))
      for (const reader of stream.readers)
        this.enqueue(reader, { body, bytes, seq, deliveryCount: 0, redelivered: false });
    const lasting = queues.filter((queue) => queue.kind !== 'stream');
    if (lasting.length === 0) return;

    const confirm = new Confirm(lasting.length);
    for (const queue of lasting)
      this.enqueue(queue, { body, bytes, seq, deliveryCount: 0, redelivered: false, confirm });
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
    handler: (delivery: Delivery<T>) => Promise<Outcome>,
    options: { prefetch: number; maxBytesInFlight?: number },
  ): Promise<Subscription> {
    return new Promise((resolve) => {
      this.assertOpen();
      const source = this.queueNamed(queue);
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

  async call<Res>(
    queue: string,
    request: Envelope,
    options: { timeoutMs: number; expirationMs?: number },
  ): Promise<Envelope<Res>> {
    this.assertOpen();
    const reply = await this.request('', queue, request, {
      timeoutMs: options.timeoutMs,
      expirationMs: options.expirationMs,
      timeoutMessage: `no reply from queue "${queue}" within ${options.timeoutMs} ms`,
      unavailable: () => new BrokerUnavailableError(`the queue "${queue}" was deleted`),
    });
    return reply as Envelope<Res>;
  }

  serve<Req, Res>(
    queue: string,
    handler: (request: Envelope<Req>) => Promise<Envelope<Res>>,
    options: { prefetch?: number } = {},
  ): Promise<Subscription> {
    return new Promise((resolve) => {
      this.assertOpen();
      const source = this.queueNamed(queue);
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
    options: { timeoutMs: number; expirationMs?: number },
  ): Promise<Envelope<Res>> {
    this.assertOpen();
    const unavailable = () =>
      new DeviceUnavailableError(`no agent is connected for device "${device}"`);
    const reply = await this.request(this.operatorExchange, device, command, {
      timeoutMs: options.timeoutMs,
      expirationMs: options.expirationMs,
      timeoutMessage: `device "${device}" did not answer within ${options.timeoutMs} ms`,
      unavailable,
      unroutable: unavailable,
    });
    return reply as Envelope<Res>;
  }

  serveDevice<Req, Res>(
    device: string,
    handler: (command: Envelope<Req>) => Promise<Envelope<Res>>,
  ): Promise<Subscription> {
    return new Promise((resolve) => {
      this.assertOpen();
      if (!this.exchanges.has(this.operatorExchange))
        throw new NotFoundError(`NOT_FOUND - no exchange '${this.operatorExchange}'`);
      // The device's queue, gone with its subscription: "no queue bound" is how senders learn
      // the agent is offline, and a queue already there that another agent serves the device.
      const name = deviceQueueName(device, this.operatorExchange);
      if (this.queues.has(name)) throw new DeviceTakenError(device, name);
      const queue = new MemoryQueue(name, 'device', DEFAULT_DELIVERY_LIMIT);
      this.queues.set(name, queue);
      this.bindings.push({ queue: name, exchange: this.operatorExchange, routingKey: device });
      const server = `device ${device}`;
      resolve(
        // Commands run in order, one at a time: key presses must not interleave.
        this.subscribe(
          queue,
          1,
          undefined,
          (envelope, message) => this.answer(server, envelope as Envelope<Req>, message, handler),
          () => this.deleteQueue(queue),
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
    await Promise.all([...this.consumers].map((consumer) => this.cancel(consumer)));
    for (const confirm of this.confirms)
      confirm.reject(new BrokerUnavailableError('the bus closed before the message was handled'));
    for (const caller of this.callers.values())
      caller.reject(new BrokerUnavailableError('the bus closed before the request was answered'));
    for (const queue of this.queues.values()) queue.ready.length = 0;
    this.connected = false;
  }

  private subscribe(
    queue: MemoryQueue,
    prefetch: number,
    maxBytesInFlight: number | undefined,
    handle: Handle,
    onCancel?: () => void,
  ): Subscription {
    // As AMQP's basic.qos: 0 means no limit.
    const window = prefetch > 0 ? prefetch : Number.POSITIVE_INFINITY;
    const consumer = new MemoryConsumer(queue, window, maxBytesInFlight, handle, onCancel);
    queue.consumers.push(consumer);
    this.consumers.add(consumer);
    this.schedule(queue);
    return { cancel: () => this.cancel(consumer) };
  }

  /**
   * Stops new deliveries at once; a message taken but not yet handed to the handler (waiting for
   * the byte budget) goes back to the queue. Resolves once the running handlers finished and
   * their outcomes were applied.
   */
  private cancel(consumer: MemoryConsumer): Promise<void> {
    consumer.cancelling ??= (async () => {
      consumer.cancelled = true;
      const { queue } = consumer;
      const index = queue.consumers.indexOf(consumer);
      if (index >= 0) queue.consumers.splice(index, 1);
      this.consumers.delete(consumer);
      consumer.onCancel?.();
      await Promise.allSettled([...consumer.work]);
      this.schedule(queue);
    })();
    return consumer.cancelling;
  }

  private request(
    exchange: string,
    routingKey: string,
    envelope: Envelope,
    options: {
      timeoutMs: number;
      expirationMs?: number | undefined;
      timeoutMessage: string;
      unavailable: () => Error;
      /** Set for device commands: an unroutable request fails at once instead of vanishing. */
      unroutable?: () => Error;
    },
  ): Promise<Envelope> {
    const id = envelope.message_id;
    if (this.callers.has(id))
      throw new AppError('conflict', `a request with message id ${id} is already waiting`);
    const body = JSON.stringify(envelope);
    const queues = this.route(exchange, routingKey).filter((queue) => queue.kind !== 'stream');
    if (queues.length === 0 && options.unroutable) {
      this.events.emit('returned', routingKey, JSON.parse(body) as Envelope);
      throw options.unroutable();
    }
    const caller = new Caller(options.unavailable);
    // No server: the request waits until one comes or the caller gives up, and never after.
    caller.after(options.timeoutMs, () => caller.reject(new TimeoutError(options.timeoutMessage)));
    const expirationMs = options.expirationMs ?? options.timeoutMs;
    if (expirationMs < options.timeoutMs) caller.after(expirationMs, () => caller.withdraw());
    const seq = this.sequence++;
    const bytes = Buffer.byteLength(body);
    for (const queue of queues)
      this.enqueue(queue, { body, bytes, seq, deliveryCount: 0, redelivered: false, caller });
    this.callers.set(id, caller);
    return caller.promise.finally(() => this.callers.delete(id));
  }

  /** Serves one request; the reply goes, as it would over the wire, to the caller waiting. */
  private answer<Req, Res>(
    server: string,
    request: Envelope<Req>,
    message: QueuedMessage,
    handler: (request: Envelope<Req>) => Promise<Envelope<Res>>,
  ): Promise<Outcome> {
    const { caller } = message;
    const send = caller
      ? (reply: Envelope<Res>) => {
          const decoded = decodeEnvelope(Buffer.from(JSON.stringify(reply) ?? ''));
          if (decoded) caller.resolve(decoded);
          else caller.reject(new AppError('operation_failed', 'the reply is not a valid envelope'));
        }
      : undefined;
    return answerRequest(this.logger, server, request, handler, send);
  }

  /** The queues a message reaches; throws as the broker's 404 for an unknown exchange. */
  private route(exchange: string, routingKey: string): MemoryQueue[] {
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

  private enqueue(queue: MemoryQueue, message: QueuedMessage): void {
    queue.ready.push(message);
    (message.confirm ?? message.caller)?.copies.push({ queue, message });
    this.schedule(queue);
  }

  /** Deliveries happen on a later turn of the event loop, as they would from a broker. */
  private schedule(queue: MemoryQueue): void {
    if (queue.dispatchScheduled) return;
    queue.dispatchScheduled = true;
    setImmediate(() => {
      queue.dispatchScheduled = false;
      this.dispatch(queue);
    });
  }

  private dispatch(queue: MemoryQueue): void {
    while (queue.ready.length > 0) {
      const consumer = queue.nextConsumer();
      if (!consumer) return;
      const message = queue.ready.shift()!;
      // Its caller gave up or its publish failed: never handled late.
      if ((message.confirm ?? message.caller)?.settled) continue;
      this.deliver(consumer, message);
    }
  }

  private deliver(consumer: MemoryConsumer, message: QueuedMessage): void {
    consumer.taken += 1;
    const work = this.handOver(consumer, message)
      .catch((err: unknown) => this.logger.error({ err }, 'message settling failed'))
      .finally(() => {
        consumer.taken -= 1;
        consumer.work.delete(work);
        this.schedule(consumer.queue);
      });
    consumer.work.add(work);
  }

  private async handOver(consumer: MemoryConsumer, message: QueuedMessage): Promise<void> {
    const { gate, queue } = consumer;
    if (gate) {
      const admitted = gate.acquire(message.bytes);
      this.adjustFlow(consumer);
      await admitted;
    }
    // Held from here until its outcome is applied: a publish that times out meanwhile waits for
    // that outcome instead of reporting "not stored".
    const { confirm } = message;
    try {
      // Its publisher gave up while it waited for the byte budget: never handled late.
      if ((confirm ?? message.caller)?.settled) return;
      if (consumer.cancelled) {
        // Taken, never handed over: the next consumer gets it.
        this.giveBack(queue, message);
        return;
      }
      if (confirm) confirm.holding += 1;
      const envelope = JSON.parse(message.body) as Envelope;
      let outcome: Outcome;
      try {
        outcome = await consumer.handle(envelope, message);
      } catch (err) {
        this.logger.warn(
          { err, queue: queue.name, messageId: envelope.message_id },
          'handler failed, message will be retried',
        );
        outcome = 'retry';
      }
      try {
        await this.settle(queue, message, outcome, envelope);
      } finally {
        if (confirm) {
          confirm.holding -= 1;
          confirm.giveUpIfNothingHeld();
        }
      }
    } finally {
      if (gate) {
        gate.release(message.bytes);
        this.adjustFlow(consumer);
      }
    }
  }

  private async settle(
    queue: MemoryQueue,
    message: QueuedMessage,
    outcome: Outcome,
    envelope: Envelope,
  ): Promise<void> {
    switch (outcome) {
      case 'ack':
        message.confirm?.handled();
        this.events.emit('acked', queue.name, envelope);
        return;
      case 'retry':
        this.events.emit('retried', queue.name, envelope);
        // A stream keeps its entries whatever a reader answers: nothing to redeliver.
        if (queue.kind === 'reader') return;
        message.deliveryCount += 1;
        message.redelivered = true;
        if (message.deliveryCount > queue.deliveryLimit)
          return this.deadLetterMessage(queue, message, envelope, 'delivery_limit');
        this.requeue(queue, message, queue.ready.length);
        return;
      case 'dead':
        return this.deadLetterMessage(queue, message, envelope, 'rejected');
    }
  }

  /**
   * A published message goes to the sink and counts as handled once stored there; requests and
   * stream entries are dropped (their queues have no dead-letter exchange on the broker either).
   */
  private async deadLetterMessage(
    queue: MemoryQueue,
    message: QueuedMessage,
    envelope: Envelope,
    reason: DeadLetterReason,
  ): Promise<void> {
    const { confirm } = message;
    if (confirm) {
      try {
        await this.deadLetter(queue.name, JSON.parse(message.body) as Envelope, reason);
      } catch (err) {
        this.logger.error(
          { err, queue: queue.name, messageId: envelope.message_id, reason },
          'dead letter not stored: its publish fails',
        );
        confirm.reject(
          new BrokerUnavailableError(
            `the message was dead-lettered from ${queue.name} but the dead letter was not stored: ${err instanceof Error ? err.message : String(err)}`,
            { cause: err },
          ),
        );
        return;
      }
    }
    confirm?.handled();
    this.events.emit('dead-lettered', queue.name, envelope);
  }

  /** Back to the place its publish order gives it, marked as seen before. */
  private giveBack(queue: MemoryQueue, message: QueuedMessage): void {
    message.redelivered = true;
    const later = queue.ready.findIndex((waiting) => waiting.seq > message.seq);
    this.requeue(queue, message, later >= 0 ? later : queue.ready.length);
  }

  private requeue(queue: MemoryQueue, message: QueuedMessage, at: number): void {
    // Its caller gave up or its publish failed meanwhile: nobody waits for it any more.
    if ((message.confirm ?? message.caller)?.settled) return;
    if (queue.deleted) {
      this.abandon(queue, message);
      return;
    }
    queue.ready.splice(at, 0, message);
    this.schedule(queue);
  }

  /** The agent's queue goes with its subscription, and the commands nobody took with it. */
  private deleteQueue(queue: MemoryQueue): void {
    queue.deleted = true;
    this.queues.delete(queue.name);
    for (let i = this.bindings.length - 1; i >= 0; i--)
      if (this.bindings[i]!.queue === queue.name) this.bindings.splice(i, 1);
    for (const message of queue.ready.splice(0)) this.abandon(queue, message);
  }

  /** Its queue is gone before anyone handled it: it was certainly not acted on. */
  private abandon(queue: MemoryQueue, message: QueuedMessage): void {
    message.caller?.reject(message.caller.unavailable());
    message.confirm?.reject(
      new BrokerUnavailableError(`the queue ${queue.name} was deleted before handling the message`),
    );
  }

  /** Reports when the byte budget stops deliveries and when they start again. */
  private adjustFlow(consumer: MemoryConsumer): void {
    const { gate, queue } = consumer;
    if (!gate || consumer.cancelled) return;
    if (gate.pressed && !consumer.paused) {
      consumer.paused = true;
      this.events.emit('deliveries-paused', queue.name, gate.bytesInProgress);
    } else if (!gate.pressed && consumer.paused) {
      consumer.paused = false;
      this.events.emit('deliveries-resumed', queue.name, gate.bytesInProgress);
      this.schedule(queue);
    }
  }

  private queueNamed(name: string): MemoryQueue {
    const queue = this.queues.get(name);
    if (!queue) throw new NotFoundError(`NOT_FOUND - no queue '${name}'`);
    return queue;
  }

  private assertOpen(): void {
    if (this.closed) throw new BrokerUnavailableError('the bus is closed');
  }
}

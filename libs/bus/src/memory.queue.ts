import type { EventEmitter } from 'node:events';
import {
  BrokerUnavailableError,
  OutcomeUnknownError,
  type Envelope,
  type Topology,
} from '@screenfleet/contracts';
import { ByteGate, handlerOutcome, type BusEvents, type Outcome } from './bus';
import type { Logger } from './logger';
import { readOwnEnvelope } from './message.codec';

// The in-process bus's queues and the consumers that take from them: a message is delivered,
// its handler's outcome settles it (ack, redeliver, dead-letter), and whoever waits for it
// learns of it: its publish (Confirm) or its caller (Caller).

/**
 * Deliveries of a message before it is dead-lettered, for a queue without `x-delivery-limit`:
 * RabbitMQ 4's default for quorum queues. Classic queues on the broker have no limit; here an
 * endless immediate redelivery would only spin the process.
 */
export const DEFAULT_DELIVERY_LIMIT = 20;

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

/** What consumers report to, and where their dead letters go: the bus's. */
export interface Settlement {
  readonly events: EventEmitter<BusEvents>;
  readonly logger: Logger;
  readonly deadLetter: DeadLetterSink;
}

/** One copy of a message in one queue. */
export interface QueuedMessage {
  /** The encoded envelope (message.codec.ts): what a broker would carry. */
  readonly body: Buffer;
  /** Publish order, so a message given back takes its place again. */
  readonly seq: number;
  deliveryCount: number;
  redelivered: boolean;
  /** The publish waiting for this copy to be handled; absent for requests and stream entries. */
  readonly confirm?: Confirm;
  /** The caller waiting for an answer, for requests (call, sendToDevice). */
  readonly caller?: Caller;
}

/** Its publish settled or its caller gave up: nobody waits for it, so it is never handled late. */
function nobodyWaits(message: QueuedMessage): boolean {
  return (message.confirm ?? message.caller)?.settled ?? false;
}

export type QueueKind =
  /** A queue of the topology. */
  | 'queue'
  /** A stream of the topology: it holds nothing itself; each subscription reads its own copy. */
  | 'stream'
  /** One subscription's copy of a stream. */
  | 'reader'
  /** A device agent's queue: exists while the agent serves, like the broker's auto-delete queue. */
  | 'device';

export class MemoryQueue {
  readonly ready: QueuedMessage[] = [];
  private readonly consumers: MemoryConsumer[] = [];
  /** For a stream: its subscriptions' copies. */
  readonly readers = new Set<MemoryQueue>();
  private deleted = false;
  private dispatchScheduled = false;
  private turn = 0;

  constructor(
    readonly name: string,
    readonly kind: QueueKind,
    readonly deliveryLimit: number,
  ) {}

  /** A consumer takes its turn from the next dispatch on. */
  add(consumer: MemoryConsumer): void {
    this.consumers.push(consumer);
    this.schedule();
  }

  remove(consumer: MemoryConsumer): void {
    const index = this.consumers.indexOf(consumer);
    if (index >= 0) this.consumers.splice(index, 1);
  }

  enqueue(message: QueuedMessage): void {
    this.ready.push(message);
    (message.confirm ?? message.caller)?.copies.push({ queue: this, message });
    this.schedule();
  }

  /** Deliveries happen on a later turn of the event loop, as they would from a broker. */
  schedule(): void {
    if (this.dispatchScheduled) return;
    this.dispatchScheduled = true;
    setImmediate(() => {
      this.dispatchScheduled = false;
      this.dispatch();
    });
  }

  /** Back to the place its publish order gives it, marked as seen before. */
  giveBack(message: QueuedMessage): void {
    message.redelivered = true;
    const later = this.ready.findIndex((waiting) => waiting.seq > message.seq);
    this.requeue(message, later >= 0 ? later : this.ready.length);
  }

  requeue(message: QueuedMessage, at: number): void {
    // Its caller gave up or its publish failed meanwhile: nobody waits for it any more.
    if (nobodyWaits(message)) return;
    if (this.deleted) {
      this.abandon(message);
      return;
    }
    this.ready.splice(at, 0, message);
    this.schedule();
  }

  /** The agent's queue goes with its subscription, and the commands nobody took with it. */
  delete(): void {
    this.deleted = true;
    for (const message of this.ready.splice(0)) this.abandon(message);
  }

  private dispatch(): void {
    while (this.ready.length > 0) {
      const consumer = this.nextConsumer();
      if (!consumer) return;
      const message = this.ready.shift()!;
      // Its caller gave up or its publish failed: never handled late.
      if (nobodyWaits(message)) continue;
      consumer.deliver(message);
    }
  }

  /** The next consumer, in turn, that may take a message now. */
  private nextConsumer(): MemoryConsumer | undefined {
    const count = this.consumers.length;
    for (let i = 0; i < count; i++) {
      const index = (this.turn + i) % count;
      const consumer = this.consumers[index]!;
      if (consumer.hasRoom()) {
        this.turn = index + 1;
        return consumer;
      }
    }
    return undefined;
  }

  /** Its queue is gone before anyone handled it: it was certainly not acted on. */
  private abandon(message: QueuedMessage): void {
    message.caller?.reject(message.caller.unavailable());
    message.confirm?.reject(
      new BrokerUnavailableError(`the queue ${this.name} was deleted before handling the message`),
    );
  }
}

export type Handle = (envelope: Envelope, message: QueuedMessage) => Promise<Outcome>;

export class MemoryConsumer {
  private cancelled = false;
  private cancelling: Promise<void> | undefined;
  /** Messages taken from the queue: running handlers and those waiting for the byte budget. */
  private taken = 0;
  /** True while the byte budget is taken (reported with deliveries-paused / -resumed). */
  private paused = false;
  private readonly work = new Set<Promise<void>>();
  private readonly gate: ByteGate | undefined;
  private readonly prefetch: number;

  constructor(
    private readonly queue: MemoryQueue,
    prefetch: number,
    maxBytesInFlight: number | undefined,
    private readonly handle: Handle,
    private readonly settlement: Settlement,
    /** Runs once when cancelled, before waiting for the handlers. */
    private readonly onCancel: (() => void) | undefined,
  ) {
    // As AMQP's basic.qos: 0 means no limit.
    this.prefetch = prefetch > 0 ? prefetch : Number.POSITIVE_INFINITY;
    this.gate = maxBytesInFlight ? new ByteGate(maxBytesInFlight) : undefined;
  }

  hasRoom(): boolean {
    return !this.cancelled && this.taken < this.prefetch && !this.gate?.pressed;
  }

  deliver(message: QueuedMessage): void {
    this.taken += 1;
    const work = this.handOver(message)
      .catch((err: unknown) => this.settlement.logger.error({ err }, 'message settling failed'))
      .finally(() => {
        this.taken -= 1;
        this.work.delete(work);
        this.queue.schedule();
      });
    this.work.add(work);
  }

  /**
   * Stops new deliveries at once; a message taken but not yet handed to the handler (waiting for
   * the byte budget) goes back to the queue. Resolves once the running handlers finished and
   * their outcomes were applied.
   */
  cancel(): Promise<void> {
    this.cancelling ??= (async () => {
      this.cancelled = true;
      this.queue.remove(this);
      this.onCancel?.();
      await Promise.allSettled([...this.work]);
      this.queue.schedule();
    })();
    return this.cancelling;
  }

  private async handOver(message: QueuedMessage): Promise<void> {
    const { gate, queue } = this;
    if (gate) {
      const admitted = gate.acquire(message.body.length);
      this.adjustFlow();
      await admitted;
    }
    // Held from here until its outcome is applied: a publish that times out meanwhile waits for
    // that outcome instead of reporting "not stored".
    const { confirm } = message;
    try {
      // Its publisher gave up while it waited for the byte budget: never handled late.
      if (nobodyWaits(message)) return;
      if (this.cancelled) {
        // Taken, never handed over: the next consumer gets it.
        queue.giveBack(message);
        return;
      }
      if (confirm) confirm.holding += 1;
      const envelope = readOwnEnvelope(message.body);
      const outcome = await handlerOutcome(this.settlement.logger, queue.name, envelope, () =>
        this.handle(envelope, message),
      );
      try {
        await this.settle(message, outcome, envelope);
      } finally {
        if (confirm) {
          confirm.holding -= 1;
          confirm.giveUpIfNothingHeld();
        }
      }
    } finally {
      if (gate) {
        gate.release(message.body.length);
        this.adjustFlow();
      }
    }
  }

  private async settle(
    message: QueuedMessage,
    outcome: Outcome,
    envelope: Envelope,
  ): Promise<void> {
    const { queue } = this;
    const { events } = this.settlement;
    switch (outcome) {
      case 'ack':
        message.confirm?.handled();
        events.emit('acked', queue.name, envelope);
        return;
      case 'retry':
        events.emit('retried', queue.name, envelope);
        // A stream keeps its entries whatever a reader answers: nothing to redeliver.
        if (queue.kind === 'reader') return;
        message.deliveryCount += 1;
        message.redelivered = true;
        if (message.deliveryCount > queue.deliveryLimit)
          return this.deadLetter(message, envelope, 'delivery_limit');
        queue.requeue(message, queue.ready.length);
        return;
      case 'dead':
        return this.deadLetter(message, envelope, 'rejected');
    }
  }

  /**
   * A published message goes to the sink and counts as handled once stored there; requests and
   * stream entries are dropped (their queues have no dead-letter exchange on the broker either).
   */
  private async deadLetter(
    message: QueuedMessage,
    envelope: Envelope,
    reason: DeadLetterReason,
  ): Promise<void> {
    const { queue } = this;
    const { confirm } = message;
    if (confirm) {
      try {
        await this.settlement.deadLetter(queue.name, readOwnEnvelope(message.body), reason);
      } catch (err) {
        this.settlement.logger.error(
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
    this.settlement.events.emit('dead-lettered', queue.name, envelope);
  }

  /** Reports when the byte budget stops deliveries and when they start again. */
  private adjustFlow(): void {
    const { gate, queue } = this;
    if (!gate || this.cancelled) return;
    const { events } = this.settlement;
    if (gate.pressed && !this.paused) {
      this.paused = true;
      events.emit('deliveries-paused', queue.name, gate.bytesInProgress);
    } else if (!gate.pressed && this.paused) {
      this.paused = false;
      events.emit('deliveries-resumed', queue.name, gate.bytesInProgress);
      queue.schedule();
    }
  }
}

export function deliveryLimitOf(queue: Topology['queues'][number]): number {
  const limit = queue.arguments['x-delivery-limit'];
  return typeof limit === 'number' && Number.isInteger(limit) && limit >= 0
    ? limit
    : DEFAULT_DELIVERY_LIMIT;
}

/** MemoryBusOptions.outcomeTimeoutMs's default. */
export const DEFAULT_OUTCOME_TIMEOUT_MS = 30_000;

/** Something waiting on copies of one message in several queues. */
class Waiter<T> {
  readonly promise: Promise<T>;
  readonly copies: Array<{ queue: MemoryQueue; message: QueuedMessage }> = [];
  settled = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private finish!: { resolve: (value: T) => void; reject: (err: Error) => void };

  constructor() {
    this.promise = new Promise<T>((resolve, reject) => (this.finish = { resolve, reject }));
  }

  resolve(value: T): void {
    if (this.end()) this.finish.resolve(value);
  }

  reject(err: Error): void {
    if (this.end()) this.finish.reject(err);
  }

  after(ms: number, action: () => void): void {
    this.timers.push(setTimeout(action, ms));
  }

  /** Takes the copies no consumer has taken out of their queues. */
  withdraw(): void {
    for (const { queue, message } of this.copies) {
      const index = queue.ready.indexOf(message);
      if (index >= 0) queue.ready.splice(index, 1);
    }
  }

  private end(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.timers.forEach(clearTimeout);
    this.withdraw();
    return true;
  }
}

/**
 * A publish: resolves once each queue it reached handled its copy. It knows which copies a
 * handler holds, so a publish that gives up can tell "nothing was stored" (BrokerUnavailable:
 * safe to retry) from "a handler may still store it" (OutcomeUnknown).
 */
export class Confirm extends Waiter<void> {
  /** Copies a handler is working on now. */
  holding = 0;
  /** Copies handled (acked, or dead-lettered and kept). */
  private handledCopies = 0;
  /** Past the publish timeout, waiting only for the outcome of a held copy. */
  overdue = false;

  constructor(private readonly total: number) {
    super();
  }

  handled(): void {
    this.handledCopies += 1;
    if (this.handledCopies === this.total) this.resolve();
  }

  /** The publish timeout: give up now when no copy was taken, else wait for the outcome. */
  expire(timeoutMs: number, outcomeTimeoutMs: number): void {
    if (this.holding === 0 && this.handledCopies === 0) {
      this.notStored(`the message was not taken by a handler within ${timeoutMs} ms`);
      return;
    }
    this.overdue = true;
    this.after(outcomeTimeoutMs, () =>
      this.reject(
        new OutcomeUnknownError(
          `the message was taken by a handler but its outcome was not known within ${timeoutMs + outcomeTimeoutMs} ms: it may be stored`,
        ),
      ),
    );
    // A copy given back before the timeout and not taken again is waiting in its queue.
    this.giveUpIfNothingHeld();
  }

  /** Overdue, and no handler holds a copy any more: what is not handled never will be. */
  giveUpIfNothingHeld(): void {
    if (!this.overdue || this.holding > 0 || this.settled) return;
    if (this.handledCopies === 0)
      this.notStored('its handler gave the message back after the publish timed out');
    else
      this.reject(
        new OutcomeUnknownError(
          'the message was handled in some of its queues but not in others within the publish timeout',
        ),
      );
  }

  private notStored(reason: string): void {
    this.reject(new BrokerUnavailableError(`${reason}: nothing was stored`));
  }
}

/** A request: resolves with the first answer. */
export class Caller extends Waiter<Envelope> {
  constructor(
    /** The error for a request whose queue went before anyone took it (an agent stopped). */
    readonly unavailable: () => Error,
  ) {
    super();
  }
}

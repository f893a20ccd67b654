import { BrokerUnavailableError, OutcomeUnknownError, type Envelope } from '@screenfleet/contracts';

// A message of the in-process bus as its queues hold it, and who waits for it: a publish for
// its copies to be handled (Confirm), a request for its answer (Caller).

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
export function nobodyWaits(message: QueuedMessage): boolean {
  return (message.confirm ?? message.caller)?.settled ?? false;
}

/** Where a copy waits: a queue's ready list. */
interface Holder {
  readonly ready: QueuedMessage[];
}

export const DEFAULT_OUTCOME_TIMEOUT_MS = 30_000;

/** Something waiting on copies of one message in several queues. */
class Waiter<T> {
  readonly promise: Promise<T>;
  readonly copies: Array<{ queue: Holder; message: QueuedMessage }> = [];
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

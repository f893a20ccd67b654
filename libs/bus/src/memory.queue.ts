import type { Envelope, Topology } from '@screenfleet/contracts';
import type { Outcome } from './bus';
import { ByteGate } from './byte-gate';
import type { QueuedMessage } from './memory.message';

// The in-process bus's queues and the consumers that take from them (memory.bus.ts routes,
// delivers and settles; memory.message.ts is what they hold and who waits for it).

/**
 * Deliveries of a message before it is dead-lettered, for a queue without `x-delivery-limit`:
 * RabbitMQ 4's default for quorum queues. Classic queues on the broker have no limit; here an
 * endless immediate redelivery would only spin the process.
 */
export const DEFAULT_DELIVERY_LIMIT = 20;

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
  readonly consumers: MemoryConsumer[] = [];
  /** For a stream: its subscriptions' copies. */
  readonly readers = new Set<MemoryQueue>();
  deleted = false;
  dispatchScheduled = false;
  private turn = 0;

  constructor(
    readonly name: string,
    readonly kind: QueueKind,
    readonly deliveryLimit: number,
  ) {}

  /** The next consumer, in turn, that may take a message now. */
  nextConsumer(): MemoryConsumer | undefined {
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
}

export type Handle = (envelope: Envelope, message: QueuedMessage) => Promise<Outcome>;

export class MemoryConsumer {
  cancelled = false;
  cancelling: Promise<void> | undefined;
  /** Messages taken from the queue: running handlers and those waiting for the byte budget. */
  taken = 0;
  /** True while the byte budget is taken (reported with deliveries-paused / -resumed). */
  paused = false;
  readonly work = new Set<Promise<void>>();
  readonly gate: ByteGate | undefined;

  constructor(
    readonly queue: MemoryQueue,
    private readonly prefetch: number,
    maxBytesInFlight: number | undefined,
    readonly handle: Handle,
    /** Runs once when cancelled, before waiting for the handlers. */
    readonly onCancel: (() => void) | undefined,
  ) {
    this.gate = maxBytesInFlight ? new ByteGate(maxBytesInFlight) : undefined;
  }

  hasRoom(): boolean {
    return !this.cancelled && this.taken < this.prefetch && !this.gate?.pressed;
  }
}

export function deliveryLimitOf(queue: Topology['queues'][number]): number {
  const limit = queue.arguments['x-delivery-limit'];
  return typeof limit === 'number' && Number.isInteger(limit) && limit >= 0
    ? limit
    : DEFAULT_DELIVERY_LIMIT;
}

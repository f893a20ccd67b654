import {
  BrokerUnavailableError,
  NotFoundError,
  type BindingSpec,
  type ExchangeSpec,
  type Topology,
} from '@screenfleet/contracts';
import { deliveryLimitOf, MemoryQueue } from './memory.queue';

/**
 * The in-process bus's exchanges, queues and bindings: the topology the amqp bus asserts, held
 * as the broker would hold it, and the queues a message reaches through them.
 */
export class MemoryRoutes {
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

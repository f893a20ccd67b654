import type { Channel } from 'amqplib';
import type { Topology } from '@screenfleet/contracts';

/**
 * Idempotent: run on every channel (re)open, so a broker that lost its definitions (restart of
 * a fresh node, a deleted queue) has them again before this channel is used.
 */
export async function assertTopology(channel: Channel, topology: Topology): Promise<void> {
  for (const exchange of topology.exchanges) {
    await channel.assertExchange(exchange.name, exchange.type, { durable: true });
  }
  for (const queue of topology.queues) {
    await channel.assertQueue(queue.name, { durable: true, arguments: queue.arguments });
  }
  for (const binding of topology.bindings) {
    await channel.bindQueue(binding.queue, binding.exchange, binding.routingKey);
  }
}

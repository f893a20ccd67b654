import amqp, { type ChannelModel, type ConfirmChannel, type GetMessage } from 'amqplib';
import { BrokerUnavailableError } from '@screenfleet/contracts';
import { errorMessage } from './amqp.connection';
import { nodeLabel } from './broker-nodes';

/** One node's URL, or the URLs of the nodes of one cluster (tried in the order given). */
type BrokerUrl = string | readonly string[];

/**
 * A short-lived connection for a one-off job (a move, a retirement): the first node that
 * answers, in the order given; BrokerUnavailableError naming each node when none does.
 */
async function connectToAnyNode(url: BrokerUrl, connectionName: string): Promise<ChannelModel> {
  const failures: string[] = [];
  for (const node of typeof url === 'string' ? [url] : url) {
    try {
      const connection = await amqp.connect(node, {
        clientProperties: { connection_name: connectionName },
      });
      connection.on('error', () => undefined);
      return connection;
    } catch (err) {
      failures.push(`${nodeLabel(node)}: ${errorMessage(err)}`);
    }
  }
  throw new BrokerUnavailableError(`cannot connect to the broker: ${failures.join('; ')}`);
}

export interface MoveOptions {
  url: BrokerUrl;
  /** The queue to take messages from. */
  from: string;
  /** The exchange to publish them to, each with the routing key it was first published with. */
  exchange: string;
  /** At most this many; default: the messages in the queue when the move starts. */
  limit?: number;
  connectionName?: string;
}

/**
 * Moves messages from a queue back to an exchange, one at a time: each is published (mandatory,
 * confirmed) before it is acked, so a crash in between duplicates a message (the consumers are
 * idempotent) and never loses one. Stops at `limit`, at an empty queue, or at the first message
 * the exchange cannot route (given back to its queue). Returns how many were moved.
 */
export async function moveMessages(options: MoveOptions): Promise<number> {
  const connection = await connectToAnyNode(
    options.url,
    options.connectionName ?? 'screenfleet-move',
  );
  try {
    const channel = await connection.createConfirmChannel();
    const returned = new Set<string>();
    channel.on('return', (message: { properties: { messageId?: unknown } }) => {
      returned.add(String(message.properties.messageId));
    });
    const { messageCount } = await channel.checkQueue(options.from);
    const limit = Math.min(options.limit ?? messageCount, messageCount);
    let moved = 0;
    while (moved < limit) {
      const message = await channel.get(options.from, { noAck: false });
      if (!message) break;
      if (!(await republish(channel, options.exchange, message, returned))) {
        channel.nack(message, false, true);
        throw new BrokerUnavailableError(
          `no queue is bound for ${options.exchange}/${routingKeyOf(message)}: stopped, the message stays in ${options.from}`,
        );
      }
      channel.ack(message);
      moved += 1;
    }
    await channel.close();
    return moved;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function republish(
  channel: ConfirmChannel,
  exchange: string,
  message: GetMessage,
  returned: Set<string>,
): Promise<boolean> {
  const { headers = {}, ...properties } = message.properties as typeof message.properties & {
    headers?: Record<string, unknown>;
  };
  // The broker's own headers (x-death, x-delivery-count, x-first-death-*) belong to the old
  // life of the message; a fresh publish starts its delivery count again.
  const ownHeaders = Object.fromEntries(
    Object.entries(headers).filter(([name]) => !name.startsWith('x-')),
  );
  const messageId = String(properties.messageId ?? `moved-${message.fields.deliveryTag}`);
  await new Promise<void>((resolve, reject) => {
    channel.publish(
      exchange,
      routingKeyOf(message),
      message.content,
      {
        ...definedOnly(properties),
        messageId,
        headers: ownHeaders,
        persistent: true,
        mandatory: true,
      },
      (err: unknown) =>
        err
          ? reject(
              new BrokerUnavailableError(
                `the broker did not take the message: ${errorMessage(err)}`,
              ),
            )
          : resolve(),
    );
  });
  return !returned.delete(messageId);
}

/** The routing key the message was first published with (a dead letter keeps it). */
function routingKeyOf(message: GetMessage): string {
  return message.fields.routingKey;
}

/** Properties worth keeping; userId would have to match the mover's own broker user. */
function definedOnly(properties: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(properties).filter(
      ([name, value]) => value != null && name !== 'userId' && name !== 'clusterId',
    ),
  );
}

/**
 * Retires a queue of an earlier topology version: unbinds it (no new messages reach it), moves
 * what it holds to `exchange` (whose current queues take them) and deletes it once empty.
 * Nothing happens when the queue does not exist. Returns how many messages were moved.
 */
export async function retireQueue(options: {
  url: BrokerUrl;
  queue: string;
  exchange: string;
  bindingKeys: string[];
  connectionName?: string;
}): Promise<number> {
  const connection = await connectToAnyNode(
    options.url,
    options.connectionName ?? 'screenfleet-retire',
  );
  try {
    // A missing queue closes the channel with 404: that is the "nothing to retire" answer.
    const probe = await connection.createChannel();
    probe.on('error', () => undefined);
    const exists = await probe.checkQueue(options.queue).then(
      () => true,
      () => false,
    );
    if (!exists) return 0;
    for (const key of options.bindingKeys)
      await probe.unbindQueue(options.queue, options.exchange, key);
    await probe.close();
  } finally {
    await connection.close().catch(() => undefined);
  }
  const moved = await moveMessages({
    url: options.url,
    from: options.queue,
    exchange: options.exchange,
    limit: Number.MAX_SAFE_INTEGER,
    connectionName: options.connectionName,
  });
  await deleteIfEmpty(options.url, options.queue);
  return moved;
}

/**
 * Quorum queues refuse queue.delete with if-empty (540, closing the connection), so emptiness
 * is checked first: no ready message and no consumer (an old worker's unacked messages would go
 * with the queue). The queue is unbound by then, so only an old gateway re-declaring it could
 * slip a message in between. A quorum queue applies acks asynchronously: checked a few times.
 * Returns whether the queue is gone.
 */
async function deleteIfEmpty(url: BrokerUrl, queue: string): Promise<boolean> {
  const connection = await connectToAnyNode(url, 'screenfleet-retire');
  try {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    for (let attempt = 0; attempt < 10; attempt++) {
      const { messageCount, consumerCount } = await channel.checkQueue(queue);
      if (messageCount === 0 && consumerCount === 0) {
        await channel.deleteQueue(queue);
        return true;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return false;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

import type { EventEmitter } from 'node:events';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { Envelope, Topology } from '@screenfleet/contracts';
import { openChannel, type ChannelUser, type ReconnectingConnection } from './amqp.connection';
import { decodeEnvelope } from './amqp.message';
import type { BusEvents, Outcome, Subscription } from './bus';
import type { Logger } from './logger';

export interface ConsumerSpec {
  /** For logs: the queue, or the device a server-named queue stands for. */
  name: string;
  prefetch: number;
  /** Runs on every channel open after the topology: declares what else is needed, names the queue. */
  prepare(channel: Channel): Promise<string>;
  /** Decides the outcome; a throw counts as 'retry'. */
  handle(envelope: Envelope, message: ConsumeMessage, channel: Channel): Promise<Outcome>;
}

/**
 * One consumer on its own channel (its own prefetch window; a channel error elsewhere does not
 * stop it). It owns ack/nack: the handler only returns an outcome. Re-consumes after every
 * reconnect or channel loss.
 */
export class Consumer implements ChannelUser, Subscription {
  private channel: Channel | undefined;
  private consumerTag: string | undefined;
  private cancelled = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly connection: ReconnectingConnection,
    private readonly topology: Topology,
    private readonly events: EventEmitter<BusEvents>,
    private readonly logger: Logger,
    private readonly spec: ConsumerSpec,
  ) {}

  async attach(model: ChannelModel): Promise<void> {
    const channel = await openChannel(
      () => model.createChannel(),
      this.topology,
      this.logger,
      (closed) => {
        if (this.channel !== closed) return;
        this.channel = undefined;
        if (!this.cancelled) this.connection.channelLost(this, model, `consumer ${this.spec.name}`);
      },
    );
    try {
      await channel.prefetch(this.spec.prefetch);
      const queue = await this.spec.prepare(channel);
      const { consumerTag } = await channel.consume(queue, (message) => {
        if (message) this.track(this.deliver(channel, queue, message));
        else this.cancelledByBroker(channel, queue);
      });
      this.channel = channel;
      this.consumerTag = consumerTag;
    } catch (err) {
      await channel.close().catch(() => undefined);
      throw err;
    }
  }

  detach(): void {
    // Unacked messages go back to the queue with the channel; running handlers finish, their
    // ack fails harmlessly and the broker redelivers.
    this.channel = undefined;
  }

  async cancel(): Promise<void> {
    if (this.cancelled) return;
    this.cancelled = true;
    this.connection.remove(this);
    const { channel, consumerTag } = this;
    this.channel = undefined;
    if (channel && consumerTag) await channel.cancel(consumerTag).catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
    if (channel) await channel.close().catch(() => undefined);
  }

  private async deliver(channel: Channel, queue: string, message: ConsumeMessage): Promise<void> {
    const envelope = decodeEnvelope(message.content);
    let outcome: Outcome = 'dead';
    if (!envelope) {
      this.logger.warn(
        { queue, messageId: String(message.properties.messageId) },
        'message body is not an envelope',
      );
    } else {
      try {
        outcome = await this.spec.handle(envelope, message, channel);
      } catch (err) {
        this.logger.warn(
          { err, queue, messageId: envelope.message_id },
          'handler failed, message will be retried',
        );
        outcome = 'retry';
      }
    }
    this.settle(channel, queue, message, outcome, envelope);
  }

  private settle(
    channel: Channel,
    queue: string,
    message: ConsumeMessage,
    outcome: Outcome,
    envelope: Envelope | undefined,
  ): void {
    try {
      switch (outcome) {
        case 'ack':
          channel.ack(message);
          break;
        case 'retry':
          channel.nack(message, false, true);
          break;
        case 'dead':
          channel.nack(message, false, false);
          break;
      }
    } catch (err) {
      // The channel closed while the handler ran: the broker redelivers the message.
      this.logger.info(
        { err, queue, outcome },
        'channel gone before settling, message will be redelivered',
      );
      return;
    }
    if (outcome === 'dead') this.events.emit('dead-lettered', queue, envelope);
    else if (envelope) this.events.emit(outcome === 'ack' ? 'acked' : 'retried', queue, envelope);
  }

  /** The broker cancels a consumer when its queue is deleted: reopen, which re-declares it. */
  private cancelledByBroker(channel: Channel, queue: string): void {
    this.logger.warn({ queue }, 'consumer cancelled by the broker, reopening');
    channel.close().catch(() => undefined);
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((err: unknown) => this.logger.error({ err }, 'message settling failed'))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }
}

import type { EventEmitter } from 'node:events';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { Envelope, Topology } from '@screenfleet/contracts';
import { openChannel, type ChannelUser, type ReconnectingConnection } from './amqp.connection';
import { ByteGate, handlerOutcome, type BusEvents, type Outcome, type Subscription } from './bus';
import type { Logger } from './logger';
import { decodeEnvelope } from './message.codec';

export interface ConsumerSpec {
  /** For logs: the queue, or the device a server-named queue stands for. */
  name: string;
  prefetch: number;
  /**
   * Bytes of message bodies handled at once. Beyond it, delivered messages wait undecoded and
   * the consumer stops taking deliveries until the handlers free bytes (prefetch counts
   * messages only). Absent: no byte limit.
   */
  maxBytesInFlight?: number;
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
  private readonly gate: ByteGate | undefined;
  private readonly closedChannels = new WeakSet<Channel>();
  private queue: string | undefined;
  /** True while deliveries are stopped (basic.cancel) because the byte budget is taken. */
  private paused = false;
  /** Pauses and resumes run one after another, each on the state of its own moment. */
  private flow: Promise<void> = Promise.resolve();

  constructor(
    private readonly connection: ReconnectingConnection,
    private readonly topology: Topology,
    private readonly events: EventEmitter<BusEvents>,
    private readonly logger: Logger,
    private readonly spec: ConsumerSpec,
  ) {
    this.gate = spec.maxBytesInFlight ? new ByteGate(spec.maxBytesInFlight) : undefined;
  }

  async attach(model: ChannelModel): Promise<void> {
    const channel = await openChannel(
      () => model.createChannel(),
      this.topology,
      this.logger,
      (closed) => {
        this.closedChannels.add(closed);
        if (this.channel !== closed) return;
        this.channel = undefined;
        if (!this.cancelled) this.connection.channelLost(this, model, `consumer ${this.spec.name}`);
      },
    );
    try {
      await channel.prefetch(this.spec.prefetch);
      const queue = await this.spec.prepare(channel);
      const consumerTag = await this.startDeliveries(channel, queue);
      this.channel = channel;
      this.queue = queue;
      this.consumerTag = consumerTag;
      this.paused = false;
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
    // A resume queued by adjustFlow may be starting deliveries: let it store its tag first.
    await this.flow;
    const { channel, consumerTag } = this;
    this.channel = undefined;
    if (channel && consumerTag) await channel.cancel(consumerTag).catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
    if (channel) await channel.close().catch(() => undefined);
  }

  private async startDeliveries(channel: Channel, queue: string): Promise<string> {
    const { consumerTag } = await channel.consume(queue, (message) => {
      if (message) this.track(this.deliverWithinBudget(channel, queue, message));
      else this.cancelledByBroker(channel, queue);
    });
    return consumerTag;
  }

  private async deliverWithinBudget(
    channel: Channel,
    queue: string,
    message: ConsumeMessage,
  ): Promise<void> {
    const { gate } = this;
    if (!gate) return this.deliver(channel, queue, message);
    const bytes = message.content.length;
    const admitted = gate.acquire(bytes);
    this.adjustFlow();
    await admitted;
    try {
      // The channel closed while it waited: the broker redelivers it; do not handle it twice.
      if (this.closedChannels.has(channel)) return;
      await this.deliver(channel, queue, message);
    } finally {
      gate.release(bytes);
      this.adjustFlow();
    }
  }

  /** Stops deliveries while the byte budget is taken, takes them again once it is not. */
  private adjustFlow(): void {
    this.flow = this.flow.then(async () => {
      const { gate, channel, queue } = this;
      if (!gate || !channel || !queue || this.cancelled) return;
      if (gate.pressed && !this.paused && this.consumerTag) {
        this.paused = true;
        await channel.cancel(this.consumerTag).catch(() => undefined);
        this.events.emit('deliveries-paused', queue, gate.bytesInProgress);
      } else if (!gate.pressed && this.paused) {
        this.paused = false;
        this.consumerTag = await this.startDeliveries(channel, queue).catch(() => undefined);
        this.events.emit('deliveries-resumed', queue, gate.bytesInProgress);
      }
    });
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
      outcome = await handlerOutcome(this.logger, queue, envelope, () =>
        this.spec.handle(envelope, message, channel),
      );
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

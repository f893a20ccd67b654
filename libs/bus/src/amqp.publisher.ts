import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { BrokerUnavailableError, type Envelope, type Topology } from '@screenfleet/contracts';
import {
  errorMessage,
  openChannel,
  type ChannelUser,
  type ReconnectingConnection,
} from './amqp.connection';
import { encodeEnvelope } from './amqp.message';
import type { Logger } from './logger';

/**
 * Publishes on a confirm channel. A publish resolves only once the broker took responsibility
 * for the message, and fails fast instead of buffering while the broker is unreachable: the
 * caller must be able to answer "try later", never report a false success.
 */
export class ConfirmPublisher implements ChannelUser {
  private channel: ConfirmChannel | undefined;
  private readonly pending = new Set<Promise<void>>();
  /** amqplib fails unconfirmed publishes with a bare "channel closed"; the 'error' before it says why. */
  private readonly closeReasons = new WeakMap<ConfirmChannel, Error>();
  /** Message ids the broker returned as unroutable; the broker sends basic.return before the ack. */
  private readonly returned = new Set<string>();

  constructor(
    private readonly connection: ReconnectingConnection,
    private readonly topology: Topology,
    private readonly confirmTimeoutMs: number,
    private readonly logger: Logger,
  ) {}

  async attach(model: ChannelModel): Promise<void> {
    const channel = await openChannel(
      () => model.createConfirmChannel(),
      this.topology,
      this.logger,
      (closed) => {
        if (this.channel !== closed) return;
        this.channel = undefined;
        this.connection.channelLost(this, model, 'publish');
      },
    );
    channel.on('error', (err: Error) => this.closeReasons.set(channel, err));
    channel.on('return', (message: { properties: { messageId?: unknown } }) => {
      if (typeof message.properties.messageId === 'string')
        this.returned.add(message.properties.messageId);
    });
    this.channel = channel;
  }

  detach(): void {
    // Unconfirmed publishes fail through their callbacks when amqplib closes the channel.
    this.channel = undefined;
  }

  async publish(exchange: string, routingKey: string, envelope: Envelope): Promise<void> {
    this.connection.assertUsable();
    const channel = this.channel;
    if (!channel) throw new BrokerUnavailableError('the publish channel is reopening');
    const confirmed = this.confirm(channel, exchange, routingKey, envelope);
    this.pending.add(confirmed);
    try {
      await confirmed;
    } finally {
      this.pending.delete(confirmed);
    }
  }

  /** Settles once every publish already started has been confirmed or has failed. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private confirm(
    channel: ConfirmChannel,
    exchange: string,
    routingKey: string,
    envelope: Envelope,
  ): Promise<void> {
    const [body, properties] = encodeEnvelope(envelope);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new BrokerUnavailableError(
            `the broker did not confirm within ${this.confirmTimeoutMs} ms`,
          ),
        );
      }, this.confirmTimeoutMs);
      try {
        // mandatory: a message no queue is bound for comes back instead of being confirmed and
        // silently dropped (e.g. its queue was deleted): that must not become a false success.
        channel.publish(
          exchange,
          routingKey,
          body,
          { ...properties, mandatory: true },
          (err: unknown) => {
            clearTimeout(timer);
            if (this.returned.delete(envelope.message_id)) {
              reject(
                new BrokerUnavailableError(
                  `no queue is bound for ${exchange}/${routingKey}: the message was not stored`,
                ),
              );
            } else if (err) {
              const reason = this.closeReasons.get(channel) ?? err;
              // A nack, or the channel closed before the confirm: the message may not be stored.
              reject(
                new BrokerUnavailableError(
                  `the broker did not take the message: ${errorMessage(reason)}`,
                  { cause: reason },
                ),
              );
            } else {
              resolve();
            }
          },
        );
      } catch (err) {
        clearTimeout(timer);
        reject(new BrokerUnavailableError(`cannot publish: ${errorMessage(err)}`, { cause: err }));
      }
    });
  }
}

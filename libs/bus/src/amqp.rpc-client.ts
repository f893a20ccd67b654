import type { EventEmitter } from 'node:events';
import type { ChannelModel, ConfirmChannel, ConsumeMessage, Message } from 'amqplib';
import {
  AppError,
  BrokerUnavailableError,
  TimeoutError,
  type Envelope,
  type Topology,
} from '@screenfleet/contracts';
import {
  errorMessage,
  openChannel,
  type ChannelUser,
  type ReconnectingConnection,
} from './amqp.connection';
import type { BusEvents } from './bus';
import type { Logger } from './logger';
import { decodeEnvelope, encodeEnvelope, messageProperties } from './message.codec';
import type { RequestDeadline } from './request-reply';

/** RabbitMQ's pseudo-queue for replies: no reply queue to declare or clean up. */
export const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

export interface RequestOptions extends RequestDeadline {
  /**
   * The error for a request already sent whose reply can no longer arrive (the connection or
   * the reply channel went). Default BrokerUnavailableError; device commands say the outcome
   * is unknown, since the agent may have acted.
   */
  lost?: (reason: string) => Error;
}

interface Pending {
  resolve(reply: Envelope): void;
  reject(err: Error): void;
  unroutable: (() => Error) | undefined;
  lost: ((reason: string) => Error) | undefined;
}

/**
 * The calling side of request/reply. Requests carry replyTo = direct reply-to and an expiration
 * equal to the caller's timeout, so the broker drops a request nobody took in time; replies are
 * matched by correlationId = the request's message id.
 *
 * The channel is in confirm mode though nobody waits for a confirm: a nack says the broker did
 * not take a request, which then fails at once instead of timing out, and the channel is
 * replaced. RabbitMQ 3.10 refuses every publish of a channel whose first publish to a quorum
 * queue came while the queue's recorded leader was dead (the publisher's `retire` says more):
 * without confirms those requests vanished and a gateway's status calls timed out for a minute.
 */
export class RpcClient implements ChannelUser {
  private channel: ConfirmChannel | undefined;
  /** Channels closed here after a nack, so their close is reported as such. */
  private readonly retired = new WeakSet<ConfirmChannel>();
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly connection: ReconnectingConnection,
    private readonly topology: Topology,
    private readonly events: EventEmitter<BusEvents>,
    private readonly logger: Logger,
  ) {}

  async attach(model: ChannelModel): Promise<void> {
    const channel = await openChannel(
      () => model.createConfirmChannel(),
      this.topology,
      this.logger,
      (closed) => {
        if (this.channel !== closed) return;
        const nacked = this.retired.has(closed);
        this.detach(new Error(nacked ? 'the broker nacked a request' : 'the reply channel closed'));
        this.connection.channelLost(
          this,
          model,
          'rpc',
          nacked ? 'the broker nacked a request: requests go on a fresh channel' : undefined,
        );
      },
    );
    channel.on('return', (message: Message) => this.returned(message));
    // Direct reply-to requires no-ack consumption on the very channel that publishes requests.
    await channel.consume(DIRECT_REPLY_TO, (message) => message && this.replied(message), {
      noAck: true,
    });
    this.channel = channel;
  }

  /** Replies travel on this channel only: when it goes, no pending reply can arrive any more. */
  detach(reason: Error): void {
    this.channel = undefined;
    this.failAll(`lost the broker connection while waiting for a reply: ${reason.message}`);
  }

  /** Fails every request waiting for a reply, each with its `lost` error. */
  failAll(reason: string): void {
    for (const pending of this.pending.values()) {
      pending.reject(pending.lost?.(reason) ?? new BrokerUnavailableError(reason));
    }
  }

  /** Resolves with the reply, typed as the caller expects it: only its envelope is checked. */
  request<Res>(
    exchange: string,
    routingKey: string,
    envelope: Envelope,
    options: RequestOptions,
  ): Promise<Envelope<Res>> {
    return new Promise<Envelope<Res>>((resolve, reject) => {
      this.connection.assertUsable();
      const channel = this.channel;
      if (!channel) throw new BrokerUnavailableError('the request channel is reopening');
      const id = envelope.message_id;
      if (this.pending.has(id))
        throw new AppError('conflict', `a request with message id ${id} is already waiting`);

      const timer = setTimeout(
        () => this.pending.get(id)?.reject(new TimeoutError(options.timeoutMessage)),
        options.timeoutMs,
      );
      const settle = (finish: () => void): void => {
        clearTimeout(timer);
        this.pending.delete(id);
        finish();
      };
      this.pending.set(id, {
        resolve: (reply) => settle(() => resolve(reply as Envelope<Res>)),
        reject: (err) => settle(() => reject(err)),
        unroutable: options.unroutable,
        lost: options.lost,
      });

      const properties = {
        ...messageProperties(envelope),
        persistent: true,
        replyTo: DIRECT_REPLY_TO,
        expiration: String(Math.max(0, Math.ceil(options.expirationMs ?? options.timeoutMs))),
        mandatory: options.unroutable !== undefined,
      };
      const body = encodeEnvelope(envelope);
      try {
        channel.publish(exchange, routingKey, body, properties, (err: unknown) => {
          // Only a nack: a close fails every pending request through detach.
          if (!(err instanceof Error) || err.message !== 'message nacked') return;
          this.pending
            .get(id)
            ?.reject(new BrokerUnavailableError('the broker did not take the request (a nack)'));
          this.retire(channel);
        });
      } catch (err) {
        settle(() =>
          reject(
            new BrokerUnavailableError(`cannot send the request: ${errorMessage(err)}`, {
              cause: err,
            }),
          ),
        );
      }
    });
  }

  private retire(channel: ConfirmChannel): void {
    if (this.channel !== channel || this.retired.has(channel)) return;
    this.retired.add(channel);
    void channel.close().catch(() => undefined);
  }

  private replied(message: ConsumeMessage): void {
    const pending = this.pending.get(String(message.properties.correlationId));
    if (!pending) {
      this.logger.debug(
        { correlationId: String(message.properties.correlationId) },
        'reply after its caller gave up',
      );
      return;
    }
    const reply = decodeEnvelope(message.content);
    if (reply) pending.resolve(reply);
    else pending.reject(new AppError('operation_failed', 'the reply is not a valid envelope'));
  }

  private returned(message: Message): void {
    const envelope = decodeEnvelope(message.content);
    if (envelope) this.events.emit('returned', message.fields.routingKey, envelope);
    const pending = this.pending.get(String(message.properties.messageId));
    if (pending?.unroutable) pending.reject(pending.unroutable());
  }
}

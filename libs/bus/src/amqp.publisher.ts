import type { ChannelModel, ConfirmChannel, Options } from 'amqplib';
import {
  BrokerUnavailableError,
  OutcomeUnknownError,
  type Envelope,
  type Topology,
} from '@screenfleet/contracts';
import {
  errorMessage,
  openChannel,
  type ChannelUser,
  type ReconnectingConnection,
} from './amqp.connection';
import type { Logger } from './logger';
import { encodeEnvelope, messageProperties } from './message.codec';

/** What amqplib's confirm channel passes to a publish's callback when the broker nacks it. */
const NACKED = 'message nacked';

/** A channel closed by the broker over a channel-level error (e.g. 404, 406), not a lost link. */
function isBrokerChannelError(reason: unknown): boolean {
  const code = (reason as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' && code >= 400 && code < 600;
}

export interface PublisherLimits {
  /** How long a publish waits for the broker's confirm. */
  confirmTimeoutMs: number;
  /** Largest message body published (RabbitMQ 4 closes the channel beyond max_message_size). */
  maxMessageBytes: number;
  /** How long a publish waits for a throttled connection to drain before failing. */
  drainTimeoutMs: number;
}

/**
 * Publishes on a confirm channel. A publish resolves only once the broker took responsibility
 * for the message, and fails fast instead of buffering while the broker is unreachable: the
 * caller must be able to answer "try later", never report a false success.
 */
export class ConfirmPublisher implements ChannelUser {
  private channel: ConfirmChannel | undefined;
  /** The connection the channel is on, to ask it for a fresh channel (retire). */
  private model: ChannelModel | undefined;
  /** Set while the channel's write buffer is full: publishes wait for its 'drain'. */
  private draining: { channel: ConfirmChannel; drained: Promise<void> } | undefined;
  private readonly pending = new Set<Promise<void>>();
  /** amqplib fails unconfirmed publishes with a bare "channel closed"; the 'error' before it says why. */
  private readonly closeReasons = new WeakMap<ConfirmChannel, Error>();
  /** Message ids the broker returned as unroutable; the broker sends basic.return before the ack. */
  private readonly returned = new Set<string>();

  constructor(
    private readonly connection: ReconnectingConnection,
    private readonly topology: Topology,
    private readonly limits: PublisherLimits,
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
    this.model = model;
    channel.on('return', (message: { properties: { messageId?: unknown } }) => {
      if (typeof message.properties.messageId === 'string')
        this.returned.add(message.properties.messageId);
    });
    this.channel = channel;
  }

  detach(): void {
    // Unconfirmed publishes fail through their callbacks when amqplib closes the channel.
    this.channel = undefined;
    this.model = undefined;
  }

  async publish(exchange: string, routingKey: string, envelope: Envelope): Promise<void> {
    this.connection.assertUsable();
    const properties = { ...messageProperties(envelope), persistent: true };
    const body = encodeEnvelope(envelope, this.limits.maxMessageBytes);
    await this.untilDrained();
    const channel = this.channel;
    if (!channel) throw new BrokerUnavailableError('the publish channel is reopening');
    const confirmed = this.confirm(channel, exchange, routingKey, envelope, body, properties);
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

  /**
   * Back-pressure: once the channel's write buffer is full (publish returned false), nothing more
   * is written until it drains, so a throttled connection (a broker under memory or disk alarm,
   * a slow link) cannot buffer without bound. Waiting longer than drainTimeoutMs fails the
   * publish as unavailable: the caller answers "try later".
   */
  private async untilDrained(): Promise<void> {
    const draining = this.draining;
    if (!draining) return;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.limits.drainTimeoutMs);
    });
    const result = await Promise.race([draining.drained, timedOut]);
    clearTimeout(timer);
    if (result === 'timeout')
      throw new BrokerUnavailableError(
        `the broker connection is throttled: nothing drained within ${this.limits.drainTimeoutMs} ms`,
      );
  }

  private holdUntilDrained(channel: ConfirmChannel): void {
    if (this.draining?.channel === channel) return;
    const drained = new Promise<void>((resolve) => {
      const done = () => {
        channel.off('drain', done);
        channel.off('close', done);
        if (this.draining?.channel === channel) this.draining = undefined;
        resolve();
      };
      channel.on('drain', done);
      // A closed channel never drains; its successor starts empty.
      channel.on('close', done);
    });
    this.draining = { channel, drained };
  }

  /**
   * After a nack, publishes go to a fresh channel. RabbitMQ 3.10 nacks every publish of a
   * channel whose first publish to a quorum queue came while the queue's recorded leader was
   * dead: its queue client keeps asking that node (seen on a cluster: a gateway answered 503 for a
   * minute after a node loss; with the channel replaced, 200 again within a second). A new
   * channel reads the queue's current leader. The nacked publishes stay refused (the broker never took
   * them); new ones are refused as unavailable until the fresh channel is open (a few hundred
   * ms). The old channel is closed once what was written on it has settled.
   */
  private retire(channel: ConfirmChannel): void {
    const model = this.model;
    if (this.channel !== channel || !model) return;
    this.channel = undefined;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.limits.confirmTimeoutMs);
    });
    void Promise.race([channel.waitForConfirms().catch(() => undefined), timedOut])
      .then(async () => {
        clearTimeout(timer);
        await channel.close().catch(() => undefined);
      })
      .then(() =>
        this.connection.channelLost(
          this,
          model,
          'publish',
          'the broker nacked a publish: publishing on a fresh channel',
        ),
      );
  }

  /**
   * Why an unconfirmed publish failed, as what the caller may say about it: a nack, or a channel
   * error the broker raised (the publish itself was refused: a missing exchange, a message too
   * large), means the message was not stored; a connection or channel lost before the confirm
   * means it may have been (docs/adr/0005: the caller must not answer a retryable 503).
   */
  private refusal(channel: ConfirmChannel, err: unknown): Error {
    const reason = this.closeReasons.get(channel) ?? err;
    const refused =
      (err instanceof Error && err.message === NACKED) || isBrokerChannelError(reason);
    return refused
      ? new BrokerUnavailableError(`the broker did not take the message: ${errorMessage(reason)}`, {
          cause: reason,
        })
      : new OutcomeUnknownError(
          `the broker connection was lost before it confirmed the message: it may be stored (${errorMessage(reason)})`,
          { cause: reason },
        );
  }

  private confirm(
    channel: ConfirmChannel,
    exchange: string,
    routingKey: string,
    envelope: Envelope,
    body: Buffer,
    properties: Options.Publish,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        // Written to the socket, neither confirmed nor refused: the broker may have stored it.
        reject(
          new OutcomeUnknownError(
            `the broker did not confirm within ${this.limits.confirmTimeoutMs} ms: the message may be stored`,
          ),
        );
      }, this.limits.confirmTimeoutMs);
      try {
        // mandatory: a message no queue is bound for comes back instead of being confirmed and
        // silently dropped (e.g. its queue was deleted): that must not become a false success.
        const written = channel.publish(
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
              if (err instanceof Error && err.message === NACKED) this.retire(channel);
              reject(this.refusal(channel, err));
            } else {
              resolve();
            }
          },
        );
        if (!written) this.holdUntilDrained(channel);
      } catch (err) {
        clearTimeout(timer);
        reject(new BrokerUnavailableError(`cannot publish: ${errorMessage(err)}`, { cause: err }));
      }
    });
  }
}

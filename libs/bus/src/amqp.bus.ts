import { EventEmitter } from 'node:events';
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage, Message } from 'amqplib';
import {
  AppError,
  BrokerUnavailableError,
  deviceQueueName,
  exchangeNames,
  OutcomeUnknownError,
  sizeLimits,
  TimeoutError,
  type Envelope,
  type Topology,
} from '@screenfleet/contracts';
import {
  errorMessage,
  openChannel,
  ReconnectingConnection,
  type ChannelUser,
} from './amqp.connection';
import { connectionOrder } from './broker-nodes';
import { Consumer, type ConsumerSpec } from './amqp.consumer';
import { DeviceTakenError } from './device-taken';
import { ConfirmPublisher } from './amqp.publisher';
import type { BackoffOptions, BrokerNodeOrder } from '@screenfleet/runtime';
import type { Bus, BusEvents, ConsumeOptions, DeliveryHandler, Outcome } from './bus';
import type { RequestDeadline, RequestHandler, RequestTimes, Subscription } from './bus';
import {
  answerRequest,
  callDeadline,
  DEVICE_PREFETCH,
  deviceDeadline,
  SERVE_PREFETCH,
} from './bus';
import { componentLogger, silentLogger, type Logger } from './logger';
import { decodeEnvelope, encodeEnvelope, messageProperties } from './message.codec';

export interface AmqpBusOptions {
  /**
   * The broker: one node's URL, or the URLs of the nodes of one cluster. The bus is connected to
   * one node at a time and, when it loses it, reconnects to the next.
   */
  url: string | readonly string[];
  /** Which node comes first: shuffled (default: processes spread over a cluster) or listed. */
  nodeOrder?: BrokerNodeOrder;
  /** Asserted on every channel (re)open. */
  topology: Topology;
  /** Shown by the broker (rabbitmqctl list_connections client_properties); tests close it by name. */
  connectionName: string;
  logger?: Logger;
  /** Backoff between reconnect attempts; default 200 ms doubling up to 10 s. */
  reconnect?: BackoffOptions;
  /** How long a publish waits for the broker's confirm; default 5 s. */
  publishTimeoutMs?: number;
  /** Largest message body published; default sizeLimits.maxMessageBytes (under RabbitMQ 4's 16 MiB). */
  maxMessageBytes?: number;
  /** How long a publish waits for a throttled connection to drain; default publishTimeoutMs. */
  drainTimeoutMs?: number;
  /** The direct exchange device commands go through; must be in the topology. */
  operatorExchange?: string;
}

/** Connects (rejecting BrokerUnavailableError if the first attempt fails), then stays connected. */
export async function createAmqpBus(options: AmqpBusOptions): Promise<Bus> {
  const bus = new AmqpBus(options);
  await bus.start();
  return bus;
}

/**
 * A service's broker connection, for its main.ts under runService (libs/runtime): connected with
 * the service's logger and its node order (RABBITMQ_URL_ORDER, in every service's config), its
 * close added to the service's stop steps.
 */
export async function connectServiceBus(
  host: {
    config: { rabbitmqUrlOrder: BrokerNodeOrder };
    logger: Logger;
    onStop: (name: string, run: () => Promise<void>) => void;
  },
  options: Omit<AmqpBusOptions, 'logger' | 'nodeOrder'>,
): Promise<Bus> {
  const bus = await createAmqpBus({
    ...options,
    nodeOrder: host.config.rabbitmqUrlOrder,
    logger: host.logger,
  });
  host.onStop('close the broker connection', () => bus.close());
  return bus;
}

class AmqpBus implements Bus {
  readonly events = new EventEmitter<BusEvents>();
  private readonly logger: Logger;
  private readonly connection: ReconnectingConnection;
  private readonly publisher: ConfirmPublisher;
  private readonly rpc: RpcClient;
  private readonly consumers = new Set<Consumer>();
  private readonly operatorExchange: string;
  private readonly servedDevices = new Set<string>();
  private closed = false;

  constructor(private readonly options: AmqpBusOptions) {
    this.logger = componentLogger(options.logger ?? silentLogger, 'bus');
    this.operatorExchange = options.operatorExchange ?? exchangeNames.operator;
    const urls = typeof options.url === 'string' ? [options.url] : options.url;
    this.connection = new ReconnectingConnection({
      nodes: connectionOrder(urls, options.nodeOrder ?? 'shuffled'),
      connectionName: options.connectionName,
      reconnect: options.reconnect ?? { initialMs: 200, maxMs: 10_000 },
      logger: this.logger,
    });
    const confirmTimeoutMs = options.publishTimeoutMs ?? 5000;
    this.publisher = new ConfirmPublisher(
      this.connection,
      options.topology,
      {
        confirmTimeoutMs,
        maxMessageBytes: options.maxMessageBytes ?? sizeLimits.maxMessageBytes,
        drainTimeoutMs: options.drainTimeoutMs ?? confirmTimeoutMs,
      },
      this.logger,
    );
    this.rpc = new RpcClient(this.connection, options.topology, this.events, this.logger);
    const { events } = this.connection;
    events.on('connected', (node) => this.events.emit('connected', node));
    events.on('disconnected', (reason) => this.events.emit('disconnected', reason));
    events.on('blocked', (reason) => this.events.emit('blocked', reason));
    events.on('unblocked', () => this.events.emit('unblocked'));
    events.on('channel-reopened', (channel) => this.events.emit('channel-reopened', channel));
  }

  async start(): Promise<void> {
    await this.connection.add(this.publisher);
    await this.connection.add(this.rpc);
    await this.connection.start();
  }

  isConnected(): boolean {
    return this.connection.isReady();
  }

  async queueDepth(queue: string): Promise<number> {
    this.assertOpen();
    return this.connection.withTemporaryChannel(
      async (channel) => (await channel.checkQueue(queue)).messageCount,
    );
  }

  async publish(exchange: string, routingKey: string, envelope: Envelope): Promise<void> {
    this.assertOpen();
    await this.publisher.publish(exchange, routingKey, envelope);
  }

  consume<T>(
    queue: string,
    handler: DeliveryHandler<T>,
    options: ConsumeOptions,
  ): Promise<Subscription> {
    return this.subscribe({
      name: queue,
      prefetch: options.prefetch,
      ...(options.maxBytesInFlight ? { maxBytesInFlight: options.maxBytesInFlight } : {}),
      prepare: () => Promise.resolve(queue),
      handle: (envelope, message) =>
        handler({
          envelope: envelope as Envelope<T>,
          redelivered: message.fields.redelivered,
          deliveryCount: deliveryCountOf(message),
        }),
    });
  }

  async call<Res>(queue: string, request: Envelope, options: RequestTimes): Promise<Envelope<Res>> {
    this.assertOpen();
    return this.rpc.request<Res>('', queue, request, callDeadline(queue, options));
  }

  serve<Req, Res>(
    queue: string,
    handler: RequestHandler<Req, Res>,
    options: { prefetch?: number } = {},
  ): Promise<Subscription> {
    return this.subscribe({
      name: queue,
      prefetch: options.prefetch ?? SERVE_PREFETCH,
      prepare: () => Promise.resolve(queue),
      handle: (envelope, message, channel) =>
        this.answer(queue, envelope as Envelope<Req>, message, channel, handler),
    });
  }

  async sendToDevice<Res>(
    device: string,
    command: Envelope,
    options: RequestTimes,
  ): Promise<Envelope<Res>> {
    this.assertOpen();
    return this.rpc.request<Res>(this.operatorExchange, device, command, {
      ...deviceDeadline(device, options),
      lost: (reason) =>
        new OutcomeUnknownError(
          `the command was sent to device "${device}" but its answer was lost (${reason}): it may or may not have been carried out; check before sending it again`,
        ),
    });
  }

  async serveDevice<Req, Res>(
    device: string,
    handler: RequestHandler<Req, Res>,
  ): Promise<Subscription> {
    this.assertOpen();
    const queue = deviceQueueName(device, this.operatorExchange);
    // The broker refuses a second connection; this refuses a second serve on this one.
    if (this.servedDevices.has(device)) throw new DeviceTakenError(device, queue);
    this.servedDevices.add(device);
    try {
      const subscription = await this.subscribe({
        name: `device ${device}`,
        prefetch: DEVICE_PREFETCH,
        // The device's queue, exclusive to this connection and deleted with it or when the
        // agent stops: "no queue bound" is how senders learn the agent is offline, and
        // RESOURCE_LOCKED how a second agent for the device learns it is taken.
        prepare: async (channel) => {
          try {
            await channel.assertQueue(queue, { exclusive: true, autoDelete: true, durable: false });
          } catch (err) {
            if (isResourceLocked(err)) throw new DeviceTakenError(device, queue, { cause: err });
            throw err;
          }
          await channel.bindQueue(queue, this.operatorExchange, device);
          return queue;
        },
        handle: (envelope, message, channel) =>
          this.answer(`device ${device}`, envelope as Envelope<Req>, message, channel, handler),
      });
      // Once: a late second cancel must not free the device that a new serve holds by then.
      let cancelled: Promise<void> | undefined;
      return {
        cancel: () =>
          (cancelled ??= subscription.cancel().then(() => {
            this.servedDevices.delete(device);
          })),
      };
    } catch (err) {
      this.servedDevices.delete(device);
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.rpc.failAll('the bus is closing');
    await Promise.all([...this.consumers].map((consumer) => consumer.cancel()));
    await this.publisher.drain();
    await this.connection.close();
  }

  private async subscribe(spec: ConsumerSpec): Promise<Subscription> {
    this.assertOpen();
    const consumer = new Consumer(
      this.connection,
      this.options.topology,
      this.events,
      this.logger,
      spec,
    );
    await this.connection.add(consumer);
    this.consumers.add(consumer);
    return {
      cancel: async () => {
        this.consumers.delete(consumer);
        await consumer.cancel();
      },
    };
  }

  /** Serves one request; the reply goes to the caller's reply queue. */
  private answer<Req, Res>(
    server: string,
    request: Envelope<Req>,
    message: ConsumeMessage,
    channel: Channel,
    handler: RequestHandler<Req, Res>,
  ): Promise<Outcome> {
    const replyTo = message.properties.replyTo as string | undefined;
    const send = replyTo
      ? (reply: Envelope<Res>) => {
          channel.publish('', replyTo, encodeEnvelope(reply), {
            ...messageProperties(reply),
            correlationId: String(message.properties.messageId),
            persistent: false,
          });
        }
      : undefined;
    return answerRequest(this.logger, server, request, handler, send);
  }

  private assertOpen(): void {
    if (this.closed) throw new BrokerUnavailableError('the bus is closed');
  }
}

/** AMQP 405: an exclusive queue another connection declared. */
function isResourceLocked(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === 405;
}

function deliveryCountOf(message: ConsumeMessage): number {
  const count: unknown = message.properties.headers?.['x-delivery-count'];
  return typeof count === 'number' ? count : 0;
}

/** RabbitMQ's pseudo-queue for replies: no reply queue to declare or clean up. */
const DIRECT_REPLY_TO = 'amq.rabbitmq.reply-to';

interface RequestOptions extends RequestDeadline {
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
 * The calling side of request/reply (`answer` above is the serving side). Requests carry
 * replyTo = direct reply-to and an expiration equal to the caller's timeout, so the broker drops
 * a request nobody took in time; replies are matched by correlationId = the request's message id.
 *
 * The channel is in confirm mode though nobody waits for a confirm: a nack says the broker did
 * not take a request, which then fails at once instead of timing out, and the channel is
 * replaced. RabbitMQ 3.10 refuses every publish of a channel whose first publish to a quorum
 * queue came while the queue's recorded leader was dead (the publisher's `retire` says more):
 * without confirms those requests vanished and a gateway's status calls timed out for a minute.
 */
class RpcClient implements ChannelUser {
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

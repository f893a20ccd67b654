import { EventEmitter } from 'node:events';
import type { Channel, ConsumeMessage } from 'amqplib';
import {
  BrokerUnavailableError,
  deviceQueueName,
  exchangeNames,
  OutcomeUnknownError,
  sizeLimits,
  type Envelope,
  type Topology,
} from '@screenfleet/contracts';
import { ReconnectingConnection } from './amqp.connection';
import { connectionOrder } from './broker-nodes';
import { Consumer, type ConsumerSpec } from './amqp.consumer';
import { DeviceTakenError } from './device-taken';
import { ConfirmPublisher } from './amqp.publisher';
import { RpcClient } from './amqp.rpc-client';
import type { BackoffOptions, BrokerNodeOrder } from '@screenfleet/runtime';
import type { Bus, BusEvents, Outcome, Subscription } from './bus';
import type { ConsumeOptions, DeliveryHandler, RequestHandler, RequestTimes } from './bus';
import { componentLogger, silentLogger, type Logger } from './logger';
import { encodeEnvelope, messageProperties } from './message.codec';
import {
  answerRequest,
  callDeadline,
  DEVICE_PREFETCH,
  deviceDeadline,
  SERVE_PREFETCH,
} from './request-reply';

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

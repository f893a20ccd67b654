import { EventEmitter } from 'node:events';
import { connect, type Channel, type ChannelModel } from 'amqplib';
import { BrokerUnavailableError, type Topology } from '@screenfleet/contracts';
import { assertTopology } from './amqp.topology';
import { backoffDelay, type BackoffOptions } from '@screenfleet/runtime';
import type { Logger } from './logger';

/** Something that owns channels: opened again on every (re)connect and after losing its channel. */
export interface ChannelUser {
  attach(model: ChannelModel): Promise<void>;
  /** The connection is gone: forget the channels, fail whatever waits on them. */
  detach(reason: Error): void;
}

interface ConnectionEvents {
  connected: [];
  disconnected: [reason: Error];
  blocked: [reason: string];
  unblocked: [];
  'channel-reopened': [channel: string];
}

export interface ConnectionOptions {
  url: string;
  connectionName: string;
  reconnect: BackoffOptions;
  logger: Logger;
}

/**
 * One AMQP connection kept open: after any close not asked for (server-side close, broker
 * restart, network loss) it reconnects with backoff and re-attaches every channel user.
 */
export class ReconnectingConnection {
  readonly events = new EventEmitter<ConnectionEvents>();
  private model: ChannelModel | undefined;
  private ready = false;
  private blocked: string | undefined;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly reattachTimers = new Set<NodeJS.Timeout>();
  private readonly users = new Set<ChannelUser>();

  constructor(private readonly options: ConnectionOptions) {}

  /** The first connection; a failure here is a start failure, not something to retry silently. */
  async start(): Promise<void> {
    try {
      await this.open();
    } catch (err) {
      this.stopped = true;
      clearTimeout(this.reconnectTimer);
      throw new BrokerUnavailableError(`cannot connect to the broker: ${errorMessage(err)}`, {
        cause: err,
      });
    }
  }

  isReady(): boolean {
    return this.ready && !this.stopped;
  }

  /** Throws BrokerUnavailableError unless a publish could succeed right now. */
  assertUsable(): void {
    if (this.stopped) throw new BrokerUnavailableError('the bus is closed');
    if (this.blocked !== undefined)
      throw new BrokerUnavailableError(`broker blocked: ${this.blocked}`);
    if (!this.ready) throw new BrokerUnavailableError('not connected to the broker');
  }

  /** Registers a user for every future (re)connect and attaches it now when connected. */
  async add(user: ChannelUser): Promise<void> {
    this.users.add(user);
    if (!this.model || !this.ready) return;
    try {
      await user.attach(this.model);
    } catch (err) {
      this.users.delete(user);
      throw err;
    }
  }

  /** A short-lived channel for a one-off query; a channel error (e.g. 404) only ends it. */
  async withTemporaryChannel<T>(use: (channel: Channel) => Promise<T>): Promise<T> {
    if (!this.model || !this.isReady())
      throw new BrokerUnavailableError('not connected to the broker');
    const channel = await this.model.createChannel();
    channel.on('error', (err: Error) =>
      this.options.logger.debug({ err }, 'temporary channel error'),
    );
    try {
      return await use(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  remove(user: ChannelUser): void {
    this.users.delete(user);
  }

  /** A user's channel closed while the connection stayed up (a channel error): reopen it. */
  channelLost(user: ChannelUser, model: ChannelModel, channelName: string): void {
    if (!this.isCurrent(model, user)) return;
    this.options.logger.warn(
      { channel: channelName },
      'channel closed by the broker, reopening it',
    );
    const timer = setTimeout(() => {
      this.reattachTimers.delete(timer);
      // The connection's own close arrives after its channels' closes: re-check before reopening.
      if (!this.isCurrent(model, user)) return;
      user.attach(model).then(
        () => this.events.emit('channel-reopened', channelName),
        (err: unknown) => {
          this.options.logger.error(
            { err, channel: channelName },
            'cannot reopen channel, reconnecting',
          );
          model.close().catch(() => undefined);
        },
      );
    }, this.options.reconnect.initialMs);
    this.reattachTimers.add(timer);
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.ready = false;
    clearTimeout(this.reconnectTimer);
    for (const timer of this.reattachTimers) clearTimeout(timer);
    const model = this.model;
    if (model) await model.close().catch(() => undefined);
  }

  private isCurrent(model: ChannelModel, user: ChannelUser): boolean {
    return this.model === model && !this.stopped && this.users.has(user);
  }

  private async open(): Promise<void> {
    const { url, connectionName, logger } = this.options;
    const model = await connect(url, {
      clientProperties: { connection_name: connectionName },
      timeout: 10_000,
      // amqplib leaves Nagle on: a publish then waits for the delayed ACK of the previous
      // frame, and every confirm costs ~40 ms instead of ~2 ms (measured on our machines).
      noDelay: true,
    });
    this.model = model;
    this.ready = false;
    // Without an 'error' listener a connection error would crash the process; 'close' follows it.
    model.on('error', (err: Error) => logger.warn({ err }, 'broker connection error'));
    model.on('close', (err?: Error) => this.closed(model, err));
    model.on('blocked', (reason: string) => {
      this.blocked = reason || 'no reason given';
      logger.warn({ reason }, 'broker blocked publishing');
      this.events.emit('blocked', this.blocked);
    });
    model.on('unblocked', () => {
      this.blocked = undefined;
      logger.info({}, 'broker unblocked publishing');
      this.events.emit('unblocked');
    });
    try {
      for (const user of this.users) await user.attach(model);
    } catch (err) {
      await model.close().catch(() => undefined);
      throw err;
    }
    if (this.model !== model)
      throw new Error('the connection closed while its channels were opening');
    this.ready = true;
    this.attempt = 0;
    logger.info({ connectionName }, 'connected to the broker');
    this.events.emit('connected');
  }

  private closed(model: ChannelModel, err: Error | undefined): void {
    if (this.model !== model) return;
    this.model = undefined;
    this.ready = false;
    this.blocked = undefined;
    const reason = err ?? new Error('connection closed');
    for (const user of this.users) user.detach(reason);
    if (this.stopped) return;
    this.options.logger.warn({ err: reason }, 'broker connection lost');
    this.events.emit('disconnected', reason);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.attempt += 1;
    const delay = backoffDelay(this.options.reconnect, this.attempt);
    this.options.logger.info(
      { attempt: this.attempt, delayMs: delay },
      'reconnecting to the broker',
    );
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.open().catch((err: unknown) => {
        this.options.logger.warn({ err }, 'reconnect failed');
        this.scheduleReconnect();
      });
    }, delay);
  }
}

/**
 * Opens a channel that cannot crash the process (error listener), reports its close, and has
 * the topology asserted before anyone uses it.
 */
export async function openChannel<C extends Channel>(
  create: () => Promise<C>,
  topology: Topology,
  logger: Logger,
  onClose: (channel: C) => void,
): Promise<C> {
  const channel = await create();
  channel.on('error', (err: Error) => logger.warn({ err }, 'channel error'));
  channel.on('close', () => onClose(channel));
  await assertTopology(channel, topology);
  return channel;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

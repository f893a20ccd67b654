import type { EventEmitter } from 'node:events';
import { DeviceUnavailableError, type Envelope } from '@screenfleet/contracts';
import type { Logger } from './logger';

// The Bus port, and the rules both adapters follow so that they behave alike: a handler's
// throw, request/reply, the byte budget. amqp.bus.ts and memory.bus.ts differ only in transport.

/**
 * What a consumer decided about one message; the adapter turns it into ack/nack, so handlers
 * never touch the broker. 'retry': failed for now, redeliver (counts toward the queue's
 * delivery limit). 'dead': poison, dead-letter it now.
 */
export type Outcome = 'ack' | 'retry' | 'dead';

/** Runs a consumer's handler, for both adapters: one that throws failed for now ('retry'). */
export async function handlerOutcome(
  logger: Logger,
  queue: string,
  envelope: Envelope,
  handle: () => Promise<Outcome>,
): Promise<Outcome> {
  try {
    return await handle();
  } catch (err) {
    logger.warn(
      { err, queue, messageId: envelope.message_id },
      'handler failed, message will be retried',
    );
    return 'retry';
  }
}

export interface Delivery<T> {
  envelope: Envelope<T>;
  redelivered: boolean;
  /** Earlier failed deliveries of this message (quorum queues' x-delivery-count); 0 the first time. */
  deliveryCount: number;
}

/** Decides what becomes of one delivery; the adapter acks or nacks accordingly. */
export type DeliveryHandler<T> = (delivery: Delivery<T>) => Promise<Outcome>;

export interface ConsumeOptions {
  prefetch: number;
  /** Bytes of message bodies handled at once (prefetch counts messages). */
  maxBytesInFlight?: number;
}

/** How long a caller waits for the reply, and how long its request may wait for a server. */
export interface RequestTimes {
  timeoutMs: number;
  /** Default timeoutMs. */
  expirationMs?: number;
}

/** Answers one request or device command. */
export type RequestHandler<Req, Res> = (request: Envelope<Req>) => Promise<Envelope<Res>>;

export interface Subscription {
  /** Stops new deliveries and waits for the handlers already running. */
  cancel(): Promise<void>;
}

/** Events tests and health checks wait for instead of sleeping. */
export interface BusEvents {
  /** The broker node connected to (no credentials); the memory bus never emits it. */
  connected: [node: string];
  disconnected: [reason: Error];
  blocked: [reason: string];
  unblocked: [];
  /** A channel closed by a channel error (the connection stayed up) is usable again. */
  'channel-reopened': [channel: string];
  acked: [queue: string, envelope: Envelope];
  retried: [queue: string, envelope: Envelope];
  /** The envelope is absent when the body could not be parsed. */
  'dead-lettered': [queue: string, envelope: Envelope | undefined];
  /** A consumer stopped taking deliveries: its byte budget is taken (maxBytesInFlight). */
  'deliveries-paused': [queue: string, bytesInFlight: number];
  'deliveries-resumed': [queue: string, bytesInFlight: number];
  /** An unroutable mandatory message came back (no agent for a device). */
  returned: [routingKey: string, envelope: Envelope];
}

export interface Bus {
  /** Persistent; resolves once the broker confirmed it; rejects BrokerUnavailableError otherwise. */
  publish(exchange: string, routingKey: string, envelope: Envelope): Promise<void>;
  consume<T>(
    queue: string,
    handler: DeliveryHandler<T>,
    options: ConsumeOptions,
  ): Promise<Subscription>;
  /**
   * Request/reply over a queue; rejects TimeoutError when no reply comes within timeoutMs. The
   * request is dropped unserved if no server took it within expirationMs (default timeoutMs).
   */
  call<Res>(queue: string, request: Envelope, options: RequestTimes): Promise<Envelope<Res>>;
  /**
   * Answers requests on `queue`; `prefetch` (default 1) is how many are handled at once, for a
   * server whose quick requests must not wait behind a slow one.
   */
  serve<Req, Res>(
    queue: string,
    handler: RequestHandler<Req, Res>,
    options?: { prefetch?: number },
  ): Promise<Subscription>;
  /**
   * Rejects DeviceUnavailableError at once when no agent serves the device, TimeoutError when it
   * is silent, OutcomeUnknownError when the answer was lost after sending. The broker drops the
   * command if no agent took it within expirationMs (default timeoutMs).
   */
  sendToDevice<Res>(
    device: string,
    command: Envelope,
    options: RequestTimes,
  ): Promise<Envelope<Res>>;
  /**
   * Takes the device's commands, one at a time. Rejects DeviceTakenError when another agent
   * (another connection, or this bus) serves the device already: one agent per device.
   */
  serveDevice<Req, Res>(device: string, handler: RequestHandler<Req, Res>): Promise<Subscription>;
  /** Messages ready in a queue (not counting those delivered and unacked), for metrics. */
  queueDepth(queue: string): Promise<number>;
  isConnected(): boolean;
  readonly events: EventEmitter<BusEvents>;
  /** Stops consuming, waits for running handlers and pending confirms, then disconnects. */
  close(): Promise<void>;
}

// Request/reply as both buses do it: the caller's deadline and what it is told, how a server
// answers. The buses differ only in how a request travels and where its reply goes.

/** By default requests are served one after another, so a slow server cannot pile up stale ones. */
export const SERVE_PREFETCH = 1;

/** A device's commands run in order, one at a time: key presses must not interleave. */
export const DEVICE_PREFETCH = 1;

/** A request's deadline, and what its caller is told when it passes or when no server exists. */
export interface RequestDeadline {
  timeoutMs: number;
  /** How long the request may wait in a queue; default timeoutMs. */
  expirationMs?: number | undefined;
  timeoutMessage: string;
  /** Set for device commands: an unroutable request fails at once instead of vanishing. */
  unroutable?: () => Error;
}

export function callDeadline(queue: string, options: RequestTimes): RequestDeadline {
  return {
    timeoutMs: options.timeoutMs,
    expirationMs: options.expirationMs,
    timeoutMessage: `no reply from queue "${queue}" within ${options.timeoutMs} ms`,
  };
}

export function deviceDeadline(device: string, options: RequestTimes): RequestDeadline {
  return {
    timeoutMs: options.timeoutMs,
    expirationMs: options.expirationMs,
    timeoutMessage: `device "${device}" did not answer within ${options.timeoutMs} ms`,
    unroutable: () => deviceUnavailable(device),
  };
}

/** No agent serves the device: the command was certainly not carried out. */
export function deviceUnavailable(device: string): DeviceUnavailableError {
  return new DeviceUnavailableError(`no agent is connected for device "${device}"`);
}

/** Where a reply goes: the caller's reply queue, or its in-process waiter. */
export type ReplySender<Res> = (reply: Envelope<Res>) => void;

/**
 * Serves one request, for both buses. A failed handler drops the request ('dead') rather than
 * retrying it: the caller has a deadline and will report the timeout; a retry could act after
 * it. A request nobody waits for (no reply address) is dropped unserved.
 */
export async function answerRequest<Req, Res>(
  logger: Logger,
  server: string,
  request: Envelope<Req>,
  handler: RequestHandler<Req, Res>,
  send: ReplySender<Res> | undefined,
): Promise<Outcome> {
  if (!send) {
    logger.warn({ server, messageId: request.message_id }, 'request without replyTo');
    return 'dead';
  }
  let reply: Envelope<Res>;
  try {
    reply = await handler(request);
  } catch (err) {
    logger.error({ err, server, messageId: request.message_id }, 'request handler failed');
    return 'dead';
  }
  send(reply);
  return 'ack';
}

/**
 * ConsumeOptions.maxBytesInFlight, for both adapters' consumers. Admits work by its size in
 * bytes: at most `maxBytes` in progress, except that one piece is always admitted when nothing
 * is in progress (a message larger than the budget must still get through). Waiters are admitted
 * in arrival order. `pressed` says the budget is taken and work waits: the time to stop asking
 * the broker for more.
 */
export class ByteGate {
  private inProgress = 0;
  private readonly waiting: Array<{ bytes: number; admit: () => void }> = [];

  constructor(readonly maxBytes: number) {}

  get bytesInProgress(): number {
    return this.inProgress;
  }

  get pressed(): boolean {
    return this.waiting.length > 0 || this.inProgress >= this.maxBytes;
  }

  acquire(bytes: number): Promise<void> {
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.inProgress += bytes;
      return Promise.resolve();
    }
    return new Promise((admit) => this.waiting.push({ bytes, admit }));
  }

  release(bytes: number): void {
    this.inProgress -= bytes;
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.inProgress += next.bytes;
      next.admit();
    }
  }

  private fits(bytes: number): boolean {
    return this.inProgress === 0 || this.inProgress + bytes <= this.maxBytes;
  }
}

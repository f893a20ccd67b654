import { DeviceUnavailableError, type Envelope } from '@screenfleet/contracts';
import type { Outcome, RequestHandler, RequestTimes } from './bus';
import type { Logger } from './logger';

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

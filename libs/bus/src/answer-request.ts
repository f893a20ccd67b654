import type { Envelope } from '@screenfleet/contracts';
import type { Outcome } from './bus';
import type { Logger } from './logger';

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
  handler: (request: Envelope<Req>) => Promise<Envelope<Res>>,
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

import { AppError, TimeoutError } from '@screenfleet/contracts';

/**
 * Taken off the sender's deadline: the reply's trip back and a small clock difference between
 * gateway and agent. The margin shortens the window, never extends it, so a press cannot land
 * after the gateway answered 504.
 */
export const DEADLINE_MARGIN_MS = 250;

/**
 * A sent_at further than this in the future means the clocks disagree too much for any
 * deadline to be trusted (the agent's clock is behind, so a stalled command would look young).
 */
export const CLOCK_SKEW_MS = 1000;

/** The command's deadline passed before it was done: nothing was pressed. Code 'timeout'. */
export class DeadlinePassedError extends TimeoutError {}

/**
 * The local time (epoch ms) after which a command must not act: sent_at + timeout_ms less the
 * margin. A sent_at slightly in the future (clock skew) counts from the time it was received,
 * so skew never lengthens the window; more than CLOCK_SKEW_MS in the future is refused.
 */
export function commandDeadline(sentAt: string, timeoutMs: number, receivedAt: number): number {
  const sent = Date.parse(sentAt);
  const ahead = sent - receivedAt;
  if (!Number.isFinite(sent) || ahead > CLOCK_SKEW_MS) {
    throw new AppError(
      'operation_failed',
      `the command's sent_at ${sentAt} is ${Number.isFinite(ahead) ? `${ahead} ms ahead of` : 'not comparable with'} this agent's clock (tolerance ${CLOCK_SKEW_MS} ms): its deadline cannot be kept, so it is not executed; synchronise the clocks (NTP)`,
    );
  }
  return Math.min(sent, receivedAt) + timeoutMs - DEADLINE_MARGIN_MS;
}

/** DeadlinePassedError when `now` is past the deadline. */
export function assertBeforeDeadline(
  deadline: number | undefined,
  now: number,
  what: string,
): void {
  if (deadline !== undefined && now > deadline) {
    throw new DeadlinePassedError(
      `${what}: ${now - deadline} ms past its deadline, not executed (nothing pressed)`,
    );
  }
}

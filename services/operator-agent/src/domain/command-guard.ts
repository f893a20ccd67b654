import type { KeyObject } from 'node:crypto';
import { AppError, verifyCommand, type Envelope } from '@screenfleet/contracts';
import type { AgentClock } from './deadline';

/**
 * How far the agent's wall clock may be from the gateway's for freshness checks. A replayed
 * command older than its timeout plus this is refused by age; a younger one by its message id.
 */
export const MAX_CLOCK_SKEW_MS = 30_000;

export type RefusalReason = 'unsigned' | 'bad_signature' | 'replayed' | 'expired';

/** A command the agent will not run at all: not from the gateway, or seen before. */
export class CommandRefusedError extends AppError {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super('operation_failed', `command refused (${reason}): ${message}`);
  }
}

/**
 * Only the gateway's commands, each once: the signature must verify with the gateway's public
 * key for this device, sent_at must be within the window, and a message id is remembered for
 * as long as a command carrying it would pass the window.
 */
export class CommandGuard {
  private readonly seen = new Map<string, number>(); // message id -> forget after (monotonic)

  constructor(
    private readonly publicKey: KeyObject,
    private readonly deviceName: string,
    private readonly clock: AgentClock,
    private readonly maxSkewMs = MAX_CLOCK_SKEW_MS,
  ) {}

  /** Checks the signature first (before anything in the payload is trusted). */
  assertSigned(envelope: Envelope): void {
    if (envelope.signature === undefined) {
      throw new CommandRefusedError('unsigned', 'operator commands must be signed by the gateway');
    }
    if (!verifyCommand(envelope, this.deviceName, this.publicKey)) {
      throw new CommandRefusedError(
        'bad_signature',
        `the signature does not verify with the gateway's key for device "${this.deviceName}"`,
      );
    }
  }

  /** Then freshness and replay, with the (signed) timeout_ms. */
  assertFresh(envelope: Envelope, timeoutMs: number): void {
    const sent = Date.parse(envelope.sent_at);
    const age = this.clock.wall() - sent;
    if (!Number.isFinite(sent) || age > timeoutMs + this.maxSkewMs || age < -this.maxSkewMs) {
      throw new CommandRefusedError(
        'expired',
        `sent_at ${envelope.sent_at} is outside this agent's window (timeout ${timeoutMs} ms, clock tolerance ${this.maxSkewMs} ms)`,
      );
    }
    const now = this.clock.monotonic();
    for (const [id, until] of this.seen) {
      if (until > now) break; // insertion order: the rest expire later
      this.seen.delete(id);
    }
    if (this.seen.has(envelope.message_id)) {
      throw new CommandRefusedError(
        'replayed',
        `message ${envelope.message_id} was already received`,
      );
    }
    this.seen.set(envelope.message_id, now + timeoutMs + 2 * this.maxSkewMs);
  }
}

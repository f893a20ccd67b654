import type { FieldError } from '@screenfleet/contracts';

/** How long a client should wait before asking again after a 503 (Retry-After). */
export const RETRY_AFTER_SECONDS = '5';

/**
 * An error the gateway's entry points decide already phrased for HTTP: its status and a bounded
 * reason for the rejects metric (auth, bodies, routing). What the domain throws are contract
 * errors (AppError), which get their status in http-errors.ts, the one mapping.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly fieldErrors: FieldError[] = [],
    readonly headers: Record<string, string> = {},
    /** The body's `code`, for answers a client tells apart by it (429 `rate_limited`). */
    readonly code?: string,
  ) {
    super(message);
  }
}

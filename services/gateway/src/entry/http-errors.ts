import type { ErrorCode, ErrorBody } from '@screenfleet/contracts';
import { AppError } from '@screenfleet/contracts';
import { HttpError, RETRY_AFTER_SECONDS } from './http-error';
import { toBodyError } from './json-body';

/** The one place where error kinds become HTTP statuses. */
const statusByCode: Record<ErrorCode, number> = {
  validation_failed: 400,
  not_found: 404,
  conflict: 409,
  device_unavailable: 404,
  broker_unavailable: 503,
  store_unavailable: 503,
  timeout: 504,
  desktop_unavailable: 503,
  operation_failed: 500,
  // Not 503 (retryable, with Retry-After) nor 502/504, which retry policies also replay: the
  // command may have run, so a client must check before trying again (docs/adr/0005).
  outcome_unknown: 500,
  worker_unavailable: 503,
  deadline_exceeded: 503,
  bad_gateway: 502,
  too_large: 413,
};

export interface HttpFailure {
  status: number;
  /** Bounded label for the rejects metric. */
  reason: string;
  body: ErrorBody;
  headers: Record<string, string>;
}

export function toHttpFailure(error: unknown): HttpFailure {
  if (error instanceof HttpError) {
    return {
      status: error.status,
      reason: error.reason,
      body: {
        success: false,
        message: error.message,
        errors: error.fieldErrors,
        ...(error.code ? { code: error.code } : {}),
      },
      headers: error.headers,
    };
  }
  if (error instanceof AppError) {
    const status = statusByCode[error.code];
    return {
      status,
      reason: error.code,
      body: {
        success: false,
        message: error.message,
        errors: error.fieldErrors,
        code: error.code,
      },
      // A client that sees 503 should come back, not give up or hammer.
      headers: status === 503 ? { 'Retry-After': RETRY_AFTER_SECONDS } : {},
    };
  }
  return {
    status: 500,
    reason: 'internal',
    body: { success: false, message: 'internal error', errors: [] },
    headers: {},
  };
}

/**
 * What a handler that threw `failure` (undefined: it answered `okStatus`) answered, for audit
 * lines and rows: the status, the rejects metric's reason ('success' when done) and the code
 * its body named (the reason where the body names none; null when done).
 */
export function answeredWith(
  failure: unknown,
  okStatus = 200,
): { status: number; reason: string; code: string | null } {
  if (failure === undefined) return { status: okStatus, reason: 'success', code: null };
  const { status, reason, body } = toHttpFailure(toBodyError(failure) ?? failure);
  return { status, reason, code: body.code ?? reason };
}

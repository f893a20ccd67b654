/**
 * The few error kinds the system tells apart. Each entry point maps `code` to an HTTP status
 * or an ack outcome in one place; nothing else inspects error messages.
 */

export const errorCodes = [
  'validation_failed',
  'not_found',
  'conflict',
  'device_unavailable',
  'broker_unavailable',
  'store_unavailable',
  'timeout',
  'desktop_unavailable',
  'operation_failed',
  'outcome_unknown',
  'worker_unavailable',
  'deadline_exceeded',
  'bad_gateway',
  'too_large',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export interface FieldError {
  /** Where in the body, as `content.data[0].timestamp`; empty for the body itself. */
  path: string;
  /** The rule that failed: required, type, format, maxLength, enum, ... */
  rule: string;
  /** A sentence a client developer can act on. */
  detail: string;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fieldErrors: FieldError[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  constructor(message: string, fieldErrors: FieldError[]) {
    super('validation_failed', message, fieldErrors);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super('not_found', message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/** No agent is connected for the addressed device. */
export class DeviceUnavailableError extends AppError {
  constructor(message: string) {
    super('device_unavailable', message);
  }
}

export class BrokerUnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('broker_unavailable', message, [], options);
  }
}

export class StoreUnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('store_unavailable', message, [], options);
  }
}

export class TimeoutError extends AppError {
  constructor(message: string) {
    super('timeout', message);
  }
}

/** The agent's desktop cannot be driven (no display, no accessibility bus...). */
export class DesktopUnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('desktop_unavailable', message, [], options);
  }
}

/**
 * A command was sent and may have been carried out, but its answer can no longer arrive (the
 * broker connection dropped while waiting). Not retryable: a retry could do it twice.
 */
export class OutcomeUnknownError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('outcome_unknown', message, [], options);
  }
}

/** No worker answered a request in time (none running, all busy): ask again later. */
export class WorkerUnavailableError extends AppError {
  constructor(message: string) {
    super('worker_unavailable', message);
  }
}

/** The work was stopped at the request's deadline (a search too broad for its time). */
export class DeadlineExceededError extends AppError {
  constructor(message: string) {
    super('deadline_exceeded', message);
  }
}

/**
 * A worker broke the contract: a reply that cannot be read, or a refusal of a request the
 * gateway built (a version mismatch). Not the client's fault, and asking again will not help
 * until it is fixed.
 */
export class BadGatewayError extends AppError {
  constructor(message: string) {
    super('bad_gateway', message);
  }
}

/** Something of the request is larger than what can be carried or stored. */
export class TooLargeError extends AppError {
  constructor(message: string, fieldErrors: FieldError[] = []) {
    super('too_large', message, fieldErrors);
  }
}

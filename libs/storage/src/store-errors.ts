import { StoreUnavailableError } from '@screenfleet/contracts';
import {
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerError,
  MongoServerSelectionError,
} from 'mongodb';

// Server codes sent while a server shuts down or steps down: the next attempt may succeed.
const unavailableServerCodes = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
]);

const unavailableSystemCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** True when the error means "the server cannot be reached now", as opposed to a bad request. */
export function isStoreUnreachable(error: unknown): boolean {
  // PoolClearedError and MongoNetworkTimeoutError are MongoNetworkErrors.
  if (error instanceof MongoNetworkError) return true;
  if (error instanceof MongoServerSelectionError) return true;
  if (error instanceof MongoNotConnectedError) return true;
  if (error instanceof MongoServerError) {
    // A bulk write wraps a driver error (a dropped connection, say) as its errorResponse.
    if (error.errorResponse instanceof Error) return isStoreUnreachable(error.errorResponse);
    return unavailableServerCodes.has(Number(error.code));
  }
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') {
    if (unavailableSystemCodes.has(error.code)) return true;
  }
  return error instanceof Error && error.cause !== undefined && isStoreUnreachable(error.cause);
}

/** The one place driver errors become the contract's error kinds; all else passes unchanged. */
export function toStoreError(
  error: unknown,
  operation: string,
  storeName = 'content store',
): unknown {
  if (error instanceof StoreUnavailableError || !isStoreUnreachable(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`${storeName} unavailable during ${operation}: ${reason}`, {
    cause: error,
  });
}

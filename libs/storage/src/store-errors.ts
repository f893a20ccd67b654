import { StoreUnavailableError } from '@screenfleet/contracts';
import {
  MongoBulkWriteError,
  MongoError,
  MongoInvalidArgumentError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  type WriteError,
} from 'mongodb';
import { BSON } from 'mongodb';
import { ContentRejectedError, sqliteCodeKind, type StoreErrorKind } from './store-error-kinds';

/**
 * Server codes for conditions that pass: the server shuts down or steps down, credentials are
 * being rotated, the disk is full, a time limit or a lock. The same write succeeds later, so the
 * caller waits with backoff; nothing about the message is wrong.
 */
const transientServerCodes = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  13, // Unauthorized (a role revoked or a user dropped during a credential rotation)
  18, // AuthenticationFailed (the old password after a rotation)
  24, // LockTimeout
  46, // LockBusy
  50, // MaxTimeMSExpired
  64, // WriteConcernFailed
  89, // NetworkTimeout
  91, // ShutdownInProgress
  112, // WriteConflict
  117, // ConflictingOperationInProgress
  133, // FailedToSatisfyReadPreference
  134, // ReadConcernMajorityNotAvailableYet
  189, // PrimarySteppedDown
  202, // NetworkInterfaceExceededTimeLimit
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11601, // Interrupted
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
  14031, // OutOfDiskSpace
]);

/** Labels the server or driver puts on errors worth retrying. */
const transientLabels = ['RetryableWriteError', 'TransientTransactionError', 'ResetPool'];

/**
 * Servers that report a full disk or a busy lock without a code of their own (WiredTiger errno
 * text, FerretDB's SQLite backend: SQLITE_BUSY, SQLITE_FULL).
 */
const transientMessage =
  /no space left on device|disk is full|database (table )?is locked|SQLITE_(BUSY|LOCKED|FULL)/i;

/** Codes that mean "this document can never be stored as it is": retrying cannot help. */
const rejectedServerCodes = new Set([
  2, // BadValue
  9, // FailedToParse
  14, // TypeMismatch
  52, // DollarPrefixedFieldName
  55, // InvalidDBRef
  56, // EmptyFieldName
  57, // DottedFieldName
  121, // DocumentValidationFailure
  10334, // BSONObjectTooLarge
  17280, // KeyTooLong
  17419, // document too large after the write
]);

const unavailableSystemCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOSPC',
]);

export { ContentRejectedError, type StoreErrorKind };

/** How a store error should be handled (StoreErrorKind): the MongoDB driver's, SQLite's, ours. */
export function classifyStoreError(error: unknown): StoreErrorKind {
  if (error instanceof StoreUnavailableError) return 'unavailable';
  if (error instanceof ContentRejectedError) return 'rejected';
  // PoolClearedError and MongoNetworkTimeoutError are MongoNetworkErrors.
  if (error instanceof MongoNetworkError) return 'unavailable';
  if (error instanceof MongoServerSelectionError) return 'unavailable';
  if (error instanceof MongoNotConnectedError) return 'unavailable';
  // A client whose first connection failed, until mongoClient has opened it again.
  if (error instanceof MongoTopologyClosedError) return 'unavailable';
  if (error instanceof MongoBulkWriteError) return classifyBulkWrite(error);
  if (error instanceof MongoServerError) {
    // A bulk write wraps a driver error (a dropped connection, say) as its errorResponse.
    if (error.errorResponse instanceof Error) return classifyStoreError(error.errorResponse);
    return classifyServerError(error);
  }
  // The driver refuses a document over the server's maximum BSON size before sending it, and
  // BSON refuses what it cannot serialise.
  if (error instanceof MongoInvalidArgumentError && /larger than the maximum/i.test(error.message))
    return 'rejected';
  if (error instanceof BSON.BSONError) return 'rejected';
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') {
    if (unavailableSystemCodes.has(error.code)) return 'unavailable';
    const kind = sqliteCodeKind(error.code);
    if (kind) return kind;
  }
  if (error instanceof Error && error.cause !== undefined) return classifyStoreError(error.cause);
  return 'unknown';
}

function classifyServerError(error: MongoError & { code?: unknown }): StoreErrorKind {
  const code = Number(error.code);
  if (transientServerCodes.has(code)) return 'unavailable';
  if (transientLabels.some((label) => error.hasErrorLabel(label))) return 'unavailable';
  if (transientMessage.test(error.message)) return 'unavailable';
  if (rejectedServerCodes.has(code)) return 'rejected';
  return 'unknown';
}

/**
 * A bulk write fails as a whole (a command error: auth, not primary...) or per document. The
 * worst per-document error decides: one that passes makes the write worth retrying as a whole.
 */
function classifyBulkWrite(error: MongoBulkWriteError): StoreErrorKind {
  if (error.errorResponse instanceof Error && !(error.errorResponse instanceof MongoBulkWriteError))
    return classifyStoreError(error.errorResponse);
  if (error.result?.getWriteConcernError?.()) return 'unavailable';
  const writeErrors: WriteError[] = ([] as WriteError[]).concat(error.writeErrors ?? []);
  const failures = writeErrors.filter((writeError) => writeError.code !== DUPLICATE_KEY);
  if (failures.length === 0) return classifyServerError(error);
  const kinds = failures.map((writeError) =>
    classifyServerError(
      new MongoServerError({ message: writeError.errmsg ?? '', code: writeError.code }),
    ),
  );
  if (kinds.includes('unavailable')) return 'unavailable';
  if (kinds.includes('unknown')) return 'unknown';
  return 'rejected';
}

/** MongoDB's duplicate key error: for our deterministic ids, "already stored". */
export const DUPLICATE_KEY = 11000;

/**
 * The indexes (in the call) of the documents an unordered bulk insert refused as duplicate keys,
 * when that is all that went wrong; undefined when anything else did too (then it is an error).
 */
export function duplicateKeyIndexes(error: unknown): number[] | undefined {
  if (!(error instanceof MongoBulkWriteError)) return undefined;
  if (error.result?.hasWriteErrors() === false) return undefined;
  const writeErrors: WriteError[] = ([] as WriteError[]).concat(error.writeErrors);
  if (writeErrors.length === 0) return undefined;
  if (!writeErrors.every((writeError) => writeError.code === DUPLICATE_KEY)) return undefined;
  if (error.result?.getWriteConcernError()) return undefined;
  return writeErrors.map((writeError) => writeError.index);
}

/** True when the error means "the server cannot take the write now", as opposed to a bad request. */
export function isStoreUnreachable(error: unknown): boolean {
  return classifyStoreError(error) === 'unavailable';
}

/**
 * The one place driver errors become the port's error kinds: StoreUnavailableError (retry
 * later), ContentRejectedError (never), all else unchanged.
 */
export function toStoreError(
  error: unknown,
  operation: string,
  storeName = 'content store',
): unknown {
  if (error instanceof StoreUnavailableError || error instanceof ContentRejectedError) return error;
  const kind = classifyStoreError(error);
  if (kind === 'unknown') return error;
  const reason = error instanceof Error ? error.message : String(error);
  return kind === 'unavailable'
    ? new StoreUnavailableError(`${storeName} unavailable during ${operation}: ${reason}`, {
        cause: error,
      })
    : new ContentRejectedError(`${storeName} refused the documents in ${operation}: ${reason}`, {
        cause: error,
      });
}

import { StoreUnavailableError } from '@screenfleet/contracts';

/**
 * The error kinds of the store ports and SQLite's part of telling them apart, without the
 * MongoDB driver (store-errors.ts adds it): the SQLite writer thread classifies its errors with
 * this alone.
 */

/** The documents given can never be stored as they are (too large, invalid): do not retry. */
export class ContentRejectedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ContentRejectedError';
  }
}

/**
 * How a store error (MongoDB driver or SQLite) should be handled:
 * - 'unavailable': the server cannot take the write now (unreachable, shutting down, not
 *   primary, credentials rotating, disk full, a time limit, a lock; for SQLite busy, locked, an
 *   I/O error, a full disk): retry with backoff;
 * - 'rejected': the documents themselves can never be written: dead-letter them;
 * - 'unknown': anything else (a bug, an unforeseen server answer).
 */
export type StoreErrorKind = 'unavailable' | 'rejected' | 'unknown';

/**
 * SQLite result codes as libsql's SqliteError carries them in `code`, extended codes included
 * (SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_FSYNC...). Busy or locked past the busy timeout, an I/O
 * error, a full disk, a file that cannot be opened or has become read-only (a volume gone or
 * remounted): the same write succeeds once the other writer or the volume is back.
 */
const sqliteUnavailable = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL|READONLY|NOLFS)(_|$)/;
/** The row can never be written as it is: too big, a violated constraint, a wrong type. */
const sqliteRejected = /^SQLITE_(TOOBIG|CONSTRAINT|MISMATCH)(_|$)/;

/** The kind a SQLite result code means, if it means one. */
export function sqliteCodeKind(code: string): StoreErrorKind | undefined {
  if (sqliteUnavailable.test(code)) return 'unavailable';
  if (sqliteRejected.test(code)) return 'rejected';
  return undefined;
}

/** classifyStoreError for SQLite's errors and the ports' own. */
export function classifySqliteError(error: unknown): StoreErrorKind {
  if (error instanceof StoreUnavailableError) return 'unavailable';
  if (error instanceof ContentRejectedError) return 'rejected';
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') {
    const kind = sqliteCodeKind(error.code);
    if (kind) return kind;
  }
  if (error instanceof Error && error.cause !== undefined) return classifySqliteError(error.cause);
  return 'unknown';
}

import { StoreUnavailableError, ValidationError } from '@screenfleet/contracts';
import {
  MongoBulkWriteError,
  MongoInvalidArgumentError,
  MongoNetworkError,
  MongoNetworkTimeoutError,
  MongoNotConnectedError,
  MongoServerError,
  MongoServerSelectionError,
  type TopologyDescription,
} from 'mongodb';
import {
  classifyStoreError,
  ContentRejectedError,
  isStoreUnreachable,
  toStoreError,
} from './store-errors';

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:27017'), {
  code: 'ECONNREFUSED',
});

const emptyBulkResult = {} as ConstructorParameters<typeof MongoBulkWriteError>[1];

describe('isStoreUnreachable', () => {
  it.each([
    ['a network error', new MongoNetworkError('connection 1 to 127.0.0.1:27017 closed')],
    ['a network timeout', new MongoNetworkTimeoutError('connection timed out')],
    // The driver's PoolClearedError is a MongoNetworkError with this message and cause.
    [
      'a cleared pool',
      new MongoNetworkError('Connection pool for 127.0.0.1 was cleared', { cause: refused }),
    ],
    [
      'a server selection timeout',
      new MongoServerSelectionError('connect ECONNREFUSED', {} as TopologyDescription),
    ],
    ['a client that is not connected', new MongoNotConnectedError('not connected')],
    ['a server shutting down', new MongoServerError({ message: 'shutting down', code: 91 })],
    [
      'a bulk write cut short by a dropped connection',
      new MongoBulkWriteError(new MongoNetworkError('connection closed'), emptyBulkResult),
    ],
    ['a refused connection', refused],
    ['an error caused by a refused connection', new Error('wrapped', { cause: refused })],
  ])('when the error is %s, then it is unreachable', (_name, error) => {
    expect(isStoreUnreachable(error)).toBe(true);
  });

  it.each([
    ['a duplicate key', new MongoServerError({ message: 'E11000 duplicate key', code: 11000 })],
    [
      'a bulk write with duplicate keys',
      new MongoBulkWriteError({ message: 'E11000', code: 11000, writeErrors: [] }, emptyBulkResult),
    ],
    ['a bad argument', new MongoInvalidArgumentError('bad filter')],
    ['a plain error', new Error('boom')],
    ['a non-error value', 'boom'],
    ['nothing', undefined],
  ])('when the error is %s, then it is not unreachable', (_name, error) => {
    expect(isStoreUnreachable(error)).toBe(false);
  });
});

describe('toStoreError', () => {
  it('when the server is unreachable, then it becomes StoreUnavailableError with the cause', () => {
    const cause = new MongoNetworkError('connection closed');

    const error = toStoreError(cause, 'insertItems');

    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe('store_unavailable');
    expect((error as StoreUnavailableError).cause).toBe(cause);
    expect((error as StoreUnavailableError).message).toContain('insertItems');
  });

  it('when a document can never be stored, then it becomes ContentRejectedError with the cause', () => {
    const bulk = new MongoBulkWriteError(
      { message: 'write failed', code: 121, writeErrors: [] },
      emptyBulkResult,
    );

    const error = toStoreError(bulk, 'insertItems');

    expect(error).toBeInstanceOf(ContentRejectedError);
    expect((error as Error).cause).toBe(bulk);
  });

  it('when the error is of no known kind, then it passes through unchanged', () => {
    const validation = new ValidationError('bad', []);
    const odd = new MongoServerError({ message: 'odd', code: 999_999 });

    expect(toStoreError(validation, 'insertItems')).toBe(validation);
    expect(toStoreError(odd, 'insertItems')).toBe(odd);
  });

  it('when it is already StoreUnavailableError, then it is not wrapped twice', () => {
    const error = new StoreUnavailableError('down');

    expect(toStoreError(error, 'countRange')).toBe(error);
  });
});

function labelled(error: MongoServerError, label: string): MongoServerError {
  error.addErrorLabel(label);
  return error;
}

const serverError = (code: number, message = `code ${code}`) =>
  new MongoServerError({ message, code });

/** A bulk write that failed per document, as insertMany(ordered: false) reports it. */
function bulkWithWriteErrors(codes: number[]): MongoBulkWriteError {
  const writeErrors = codes.map((code, index) => ({ index, code, errmsg: `code ${code}` }));
  const result = {
    hasWriteErrors: () => true,
    getWriteConcernError: () => undefined,
  } as unknown as ConstructorParameters<typeof MongoBulkWriteError>[1];
  const error = new MongoBulkWriteError({ message: 'write errors', code: codes[0] ?? 0 }, result);
  Object.defineProperty(error, 'writeErrors', { value: writeErrors });
  return error;
}

/** What libsql throws: a SqliteError with the (extended) result code as a string. */
const sqliteError = (code: string, message = code) =>
  Object.assign(new Error(message), { name: 'SqliteError', code });

describe('classifyStoreError', () => {
  it.each([
    ['Unauthorized (13) after a credential rotation', serverError(13)],
    ['AuthenticationFailed (18)', serverError(18)],
    ['NotWritablePrimary (10107)', serverError(10107)],
    ['NotPrimaryNoSecondaryOk (13435)', serverError(13435)],
    ['MaxTimeMSExpired (50)', serverError(50)],
    ['LockTimeout (24)', serverError(24)],
    ['LockBusy (46)', serverError(46)],
    ['WriteConflict (112)', serverError(112)],
    ['OutOfDiskSpace (14031)', serverError(14031)],
    ['a full disk reported as text', serverError(1, 'No space left on device')],
    ['a busy SQLite database', serverError(1, 'database is locked (SQLITE_BUSY)')],
    [
      'a whole bulk write refused for auth',
      new MongoBulkWriteError(serverError(13), emptyBulkResult),
    ],
    ['an error labelled retryable', labelled(serverError(999), 'RetryableWriteError')],
    ['a document write that hit a lock', bulkWithWriteErrors([11000, 24])],
    ['SQLite busy past the busy timeout', sqliteError('SQLITE_BUSY', 'database is locked')],
    ['SQLite busy on a stale WAL snapshot', sqliteError('SQLITE_BUSY_SNAPSHOT')],
    ['a SQLite table locked', sqliteError('SQLITE_LOCKED')],
    ['a SQLite disk I/O error', sqliteError('SQLITE_IOERR_FSYNC', 'disk I/O error')],
    ['a full disk under SQLite', sqliteError('SQLITE_FULL')],
    ['a SQLite file that cannot be opened', sqliteError('SQLITE_CANTOPEN')],
    ['a SQLite file on a volume turned read-only', sqliteError('SQLITE_READONLY')],
  ])('when the error is %s, then it is unavailable (retry with backoff)', (_name, error) => {
    expect(classifyStoreError(error)).toBe('unavailable');
    expect(toStoreError(error, 'insertItems')).toBeInstanceOf(StoreUnavailableError);
  });

  it.each([
    ['BSONObjectTooLarge (10334)', bulkWithWriteErrors([10334])],
    ['a validation failure next to duplicates', bulkWithWriteErrors([11000, 121])],
    [
      "the driver's refusal of a document over the maximum size",
      new MongoInvalidArgumentError('Document is larger than the maximum size 16777216'),
    ],
    ['a SQLite row too big', sqliteError('SQLITE_TOOBIG')],
    ['a SQLite NOT NULL constraint', sqliteError('SQLITE_CONSTRAINT_NOTNULL')],
  ])('when the error is %s, then the documents are rejected (dead-letter)', (_name, error) => {
    expect(classifyStoreError(error)).toBe('rejected');
  });

  it.each([
    ['an unknown server code', serverError(999_999)],
    ['a plain error', new Error('boom')],
    ['an unknown per-document code', bulkWithWriteErrors([10334, 999_999])],
    ['a SQLite syntax error', sqliteError('SQLITE_ERROR', 'near "SELEC": syntax error')],
    ['a corrupt SQLite file', sqliteError('SQLITE_CORRUPT')],
    ['a code that only starts like a SQLite one', sqliteError('SQLITE_BUSYNESS')],
  ])('when the error is %s, then it is unknown', (_name, error) => {
    expect(classifyStoreError(error)).toBe('unknown');
  });
});

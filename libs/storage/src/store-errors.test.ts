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
import { isStoreUnreachable, toStoreError } from './store-errors';

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

  it('when the error is anything else, then it passes through unchanged', () => {
    const bulk = new MongoBulkWriteError(
      { message: 'write failed', code: 121, writeErrors: [] },
      emptyBulkResult,
    );
    const validation = new ValidationError('bad', []);

    expect(toStoreError(bulk, 'insertItems')).toBe(bulk);
    expect(toStoreError(validation, 'insertItems')).toBe(validation);
  });

  it('when it is already StoreUnavailableError, then it is not wrapped twice', () => {
    const error = new StoreUnavailableError('down');

    expect(toStoreError(error, 'countRange')).toBe(error);
  });
});

import { NotFoundError, StoreUnavailableError } from '@screenfleet/contracts';
import { ChecksumMismatchError } from './archive-errors';
import { classifyS3Error, toArchiveError } from './s3-errors';

/** An error shaped like the SDK's service exceptions: a name and the HTTP status. */
const serviceError = (name: string, status: number) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
const systemError = (code: string) =>
  Object.assign(new Error(`connect ${code} 127.0.0.1:9000`), { code });

describe('classifyS3Error', () => {
  it.each([
    ['a refused connection', systemError('ECONNREFUSED')],
    ['a reset connection', systemError('ECONNRESET')],
    ['an unknown host', systemError('ENOTFOUND')],
    [
      "the SDK's wrapper of a foreign-realm socket error",
      new Error('AWS SDK error wrapper for Error: connect ECONNREFUSED 127.0.0.1:9000'),
    ],
    ['the SDK request timeout', Object.assign(new Error('timed out'), { name: 'TimeoutError' })],
    ['SlowDown', serviceError('SlowDown', 503)],
    ['a 500', serviceError('InternalError', 500)],
    ['a 502 without a name', serviceError('Unknown', 502)],
    ['throttling', serviceError('ThrottlingException', 400)],
    ['a 429', serviceError('TooManyRequests', 429)],
    [
      'a cause that is a refused connection',
      new Error('x', { cause: systemError('ECONNREFUSED') }),
    ],
  ])('when the error is %s, then it is unavailable', (_name, error) => {
    expect(classifyS3Error(error)).toBe('unavailable');
  });

  it.each([
    ['NoSuchKey', serviceError('NoSuchKey', 404)],
    ['a HEAD 404', serviceError('NotFound', 404)],
    ['NoSuchBucket', serviceError('NoSuchBucket', 404)],
  ])('when the error is %s, then it is not found', (_name, error) => {
    expect(classifyS3Error(error)).toBe('not_found');
  });

  it.each([
    ['BadDigest', serviceError('BadDigest', 400)],
    ['XAmzContentChecksumMismatch', serviceError('XAmzContentChecksumMismatch', 400)],
  ])('when the error is %s, then it is a checksum mismatch', (_name, error) => {
    expect(classifyS3Error(error)).toBe('checksum_mismatch');
  });

  it.each([
    ['access denied', serviceError('AccessDenied', 403)],
    ['a bad request', serviceError('InvalidArgument', 400)],
    ['a wrapper without a system code', new Error('AWS SDK error wrapper for undefined')],
    ['a plain error', new Error('boom')],
    ['a string', 'boom'],
    ['nothing', undefined],
  ])('when the error is %s, then it is other', (_name, error) => {
    expect(classifyS3Error(error)).toBe('other');
  });
});

describe('toArchiveError', () => {
  it('when the store is unreachable, then StoreUnavailableError names the operation and keeps the cause', () => {
    const cause = systemError('ECONNREFUSED');

    const error = toArchiveError(cause, 'put', 'chunks/a');

    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).message).toContain('put chunks/a');
    expect((error as StoreUnavailableError).cause).toBe(cause);
  });

  it('when the object is missing or the checksum differs, then the contract errors come', () => {
    expect(toArchiveError(serviceError('NoSuchKey', 404), 'get', 'a')).toBeInstanceOf(
      NotFoundError,
    );
    expect(toArchiveError(serviceError('BadDigest', 400), 'put', 'a')).toBeInstanceOf(
      ChecksumMismatchError,
    );
  });

  it('when the bucket is missing, then NotFoundError says so rather than blaming the object', () => {
    const error = toArchiveError(serviceError('NoSuchBucket', 404), 'put', 'a');

    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).message).toContain('bucket does not exist');
  });

  it('when the error is anything else, then it passes through unchanged', () => {
    const denied = serviceError('AccessDenied', 403);

    expect(toArchiveError(denied, 'put', 'a')).toBe(denied);
  });
});

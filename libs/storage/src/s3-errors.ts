import { NotFoundError, StoreUnavailableError } from '@screenfleet/contracts';
import { ChecksumMismatchError } from './archive-errors';

/** What an S3 SDK error carries that tells its kind (it may come from another realm: no instanceof). */
interface S3ErrorShape {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  cause?: unknown;
}

export type S3ErrorKind = 'unavailable' | 'not_found' | 'checksum_mismatch' | 'other';

// Names S3 and its look-alikes (MinIO, R2, B2) send for "not now", plus the SDK's own timeouts.
const unavailableNames = new Set([
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
  'RequestTimeout',
  'Throttling',
  'ThrottlingException',
  'TooManyRequests',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'TimeoutError', // the SDK's request timeout
  'XMinioServerNotInitialized',
  'XMinioStorageFull',
]);

const unavailableSystemCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EADDRNOTAVAIL',
]);

const notFoundNames = new Set(['NoSuchKey', 'NotFound', 'NoSuchBucket']);

// The body that arrived does not match the checksum sent with it.
const checksumNames = new Set([
  'BadDigest',
  'InvalidDigest',
  'XAmzContentChecksumMismatch',
  'XAmzContentSHA256Mismatch',
  'InvalidChecksum',
]);

/** Classifies an error from @aws-sdk/client-s3 (or from the network under it). */
export function classifyS3Error(error: unknown): S3ErrorKind {
  if (typeof error !== 'object' || error === null) return 'other';
  const shape = error as S3ErrorShape;
  const name = typeof shape.name === 'string' ? shape.name : '';
  const code = typeof shape.code === 'string' ? shape.code : '';
  const status = Number(shape.$metadata?.httpStatusCode);
  if (checksumNames.has(name) || checksumNames.has(code)) return 'checksum_mismatch';
  if (notFoundNames.has(name) || status === 404) return 'not_found';
  if (unavailableNames.has(name) || unavailableNames.has(code)) return 'unavailable';
  if (status >= 500 || status === 429 || status === 503) return 'unavailable';
  if (unavailableSystemCodes.has(code)) return 'unavailable';
  // The SDK's retry layer rewraps a thrown value that is not an Error of its own realm (Node's
  // socket errors under jest's sandbox) as "AWS SDK error wrapper for Error: connect
  // ECONNREFUSED ...": only the text keeps the system code then.
  const message = typeof shape.message === 'string' ? shape.message : '';
  const systemCode = /\b(E[A-Z_]{3,})\b/.exec(message)?.[1];
  if (message.startsWith('AWS SDK error wrapper') && unavailableSystemCodes.has(systemCode ?? ''))
    return 'unavailable';
  // Aggregated connection errors (IPv4 and IPv6 both refused) and wrapped causes.
  if (name === 'AggregateError' && 'errors' in shape && Array.isArray(shape.errors))
    return shape.errors.some((inner) => classifyS3Error(inner) === 'unavailable')
      ? 'unavailable'
      : 'other';
  if (shape.cause !== undefined)
    return classifyS3Error(shape.cause) === 'unavailable' ? 'unavailable' : 'other';
  return 'other';
}

/**
 * The one place S3 errors become the contract's error kinds; all else (access denied, a bad
 * request, a bucket we may not create) passes through unchanged.
 */
export function toArchiveError(error: unknown, operation: string, key?: string): unknown {
  const what = key === undefined ? operation : `${operation} ${key}`;
  const reason = String((error as S3ErrorShape | undefined)?.message ?? error);
  switch (classifyS3Error(error)) {
    case 'unavailable':
      return new StoreUnavailableError(`archive store unavailable during ${what}: ${reason}`, {
        cause: error,
      });
    case 'not_found':
      // A missing bucket is not a missing object: say which, so a skipped ensureReady shows.
      return (error as S3ErrorShape).name === 'NoSuchBucket'
        ? new NotFoundError(`${what}: bucket does not exist (${reason})`)
        : new NotFoundError(`archive object ${key ?? ''} not found (${what}: ${reason})`);
    case 'checksum_mismatch':
      return new ChecksumMismatchError(
        `${what}: the store refused the body, its checksum does not match the sha256 given (${reason})`,
        { cause: error },
      );
    case 'other':
      return error;
  }
}

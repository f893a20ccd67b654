import { ValidationError } from '@screenfleet/contracts';

/** S3's limit; the filesystem adapter keeps it too, so a key valid in one store is in the other. */
const MAX_KEY_BYTES = 1024;

/**
 * The one rule for archive keys, shared by every adapter so both accept the same keys: segments
 * separated by "/", none empty, none starting with "." (so "." and ".." cannot walk out of the
 * root or prefix, and the filesystem adapter's hidden temp files never collide with a key), no
 * leading "/", no backslash (a separator on Windows), no NUL or other control characters.
 */
export function checkArchiveKey(key: string): void {
  const problem = keyProblem(key);
  if (problem) throw invalid('key', key, problem);
}

/**
 * A list prefix is a key's beginning: the same rule for every complete segment; the last,
 * partial one may be empty (a prefix ending in "/", or "" for everything) but not start with ".".
 */
export function checkArchivePrefix(prefix: string): void {
  if (prefix === '') return;
  const problem = keyProblem(prefix.endsWith('/') ? `${prefix}x` : prefix);
  if (problem) throw invalid('prefix', prefix, problem);
}

/** Hex SHA-256, as `put` and `verify` take it. */
export function checkSha256(sha256: string): void {
  if (!/^[0-9a-f]{64}$/.test(sha256)) {
    throw new ValidationError('sha256 must be 64 lowercase hex digits', [
      { path: 'sha256', rule: 'pattern', detail: 'sha256 must be 64 lowercase hex digits' },
    ]);
  }
}

function keyProblem(key: string): string | undefined {
  if (key === '') return 'must not be empty';
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES)
    return `must be at most ${MAX_KEY_BYTES} bytes`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'must not contain NUL or control characters';
  if (key.includes('\\')) return 'must not contain a backslash';
  if (key.startsWith('/')) return 'must be relative (no leading "/")';
  for (const segment of key.split('/')) {
    if (segment === '') return 'must not contain an empty segment ("//" or a trailing "/")';
    if (segment.startsWith('.'))
      return 'must not contain a segment starting with "." (such as "..")';
  }
  return undefined;
}

function invalid(path: string, value: string, problem: string): ValidationError {
  const detail = `${path} ${problem}`;
  return new ValidationError(`invalid archive ${path} ${JSON.stringify(value)}: ${problem}`, [
    { path, rule: 'pattern', detail },
  ]);
}

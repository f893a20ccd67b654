import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { types } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { AppError } from '@screenfleet/contracts';
import type { ContentDocument } from '@screenfleet/storage';

/**
 * How a chunk of content items is stored: JSON lines (dates kept as `{"$date": ISO}`), gzip,
 * then, when a key is configured, AES-256-GCM. A small header says which, so a reader never
 * guesses: "SFA1", one flag byte (1 = encrypted), and for encrypted objects the 12-byte IV and
 * the 16-byte GCM tag before the ciphertext. The header is the GCM's additional data, so
 * flipping the flag is caught like any other change.
 */
const MAGIC = Buffer.from('SFA1');
const FLAG_ENCRYPTED = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A stored object that does not decode: tampered, truncated, or sealed with another key. */
export class ArchiveObjectCorruptError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('operation_failed', message, [], options);
  }
}

export interface EncodedChunk {
  body: Buffer;
  /** Hex SHA-256 of `body`, the bytes the store holds. */
  sha256: string;
}

export const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** `key` is 32 bytes (AES-256) or absent for no encryption. */
export function encodeChunk(docs: readonly ContentDocument[], key?: Buffer): EncodedChunk {
  const lines = docs.map((doc) => JSON.stringify(doc, keepDates)).join('\n');
  return sealBytes(gzipSync(Buffer.from(lines, 'utf8')), key);
}

/** Checks `sha256` (when given) before anything else, then decrypts and decompresses. */
export function decodeChunk(
  body: Buffer,
  key: Buffer | undefined,
  options: { name: string; sha256?: string },
): ContentDocument[] {
  const gz = openBytes(body, key, options);
  let text: string;
  try {
    text = gunzipSync(gz).toString('utf8');
  } catch (cause) {
    throw new ArchiveObjectCorruptError(
      `archive object ${options.name} does not decompress (truncated or damaged)`,
      { cause },
    );
  }
  if (text === '') return [];
  try {
    return text.split('\n').map((line) => JSON.parse(line, reviveDates) as ContentDocument);
  } catch (cause) {
    throw new ArchiveObjectCorruptError(`archive object ${options.name} is not valid JSON lines`, {
      cause,
    });
  }
}

/** The same envelope for media files: compressed formats gain nothing from gzip, so raw bytes. */
export function sealBytes(plain: Buffer, key?: Buffer): EncodedChunk {
  if (!key) {
    const body = Buffer.concat([MAGIC, Buffer.from([0]), plain]);
    return { body, sha256: sha256Hex(body) };
  }
  const header = Buffer.concat([MAGIC, Buffer.from([FLAG_ENCRYPTED])]);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(header);
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  const body = Buffer.concat([header, iv, cipher.getAuthTag(), ciphertext]);
  return { body, sha256: sha256Hex(body) };
}

export function openBytes(
  body: Buffer,
  key: Buffer | undefined,
  options: { name: string; sha256?: string },
): Buffer {
  const { name } = options;
  if (options.sha256 !== undefined && sha256Hex(body) !== options.sha256) {
    throw new ArchiveObjectCorruptError(
      `archive object ${name} does not match its recorded SHA-256 (tampered or truncated)`,
    );
  }
  if (body.length < MAGIC.length + 1 || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new ArchiveObjectCorruptError(`archive object ${name} has no archive header`);
  }
  const flags = body[MAGIC.length];
  const rest = body.subarray(MAGIC.length + 1);
  if (flags === 0) {
    // With a key configured every object this archive wrote is sealed: a plain one was put
    // there by someone else (a forged or downgraded object), so it is never trusted.
    if (key) {
      throw new ArchiveObjectCorruptError(
        `archive object ${name} is not encrypted but ARCHIVE_ENCRYPTION_KEY is configured (refused: not written by this archive)`,
      );
    }
    return rest;
  }
  if (flags !== FLAG_ENCRYPTED) {
    throw new ArchiveObjectCorruptError(`archive object ${name} has unknown flags ${flags}`);
  }
  if (!key) {
    throw new ArchiveObjectCorruptError(
      `archive object ${name} is encrypted and no ARCHIVE_ENCRYPTION_KEY is configured`,
    );
  }
  if (rest.length < IV_BYTES + TAG_BYTES) {
    throw new ArchiveObjectCorruptError(`archive object ${name} is truncated`);
  }
  const decipher = createDecipheriv('aes-256-gcm', key, rest.subarray(0, IV_BYTES));
  decipher.setAAD(body.subarray(0, MAGIC.length + 1));
  decipher.setAuthTag(rest.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(rest.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch (cause) {
    throw new ArchiveObjectCorruptError(
      `archive object ${name} fails decryption: tampered, truncated, or sealed with another key`,
      { cause },
    );
  }
}

function keepDates(this: Record<string, unknown>, field: string, value: unknown): unknown {
  // `value` already went through Date#toJSON; the holder still has the Date itself. isDate, not
  // instanceof: a Date made in another realm (structuredClone, a vm context) is a Date too.
  const raw = this[field];
  return types.isDate(raw) ? { $date: raw.toISOString() } : value;
}

function reviveDates(_field: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    const date = (value as { $date?: unknown }).$date;
    if (keys.length === 1 && typeof date === 'string') return new Date(date);
  }
  return value;
}

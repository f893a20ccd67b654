import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { types } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { AppError } from '@screenfleet/contracts';
import type { ContentDocument } from '@screenfleet/storage';

/**
 * How a chunk of content items is stored: JSON lines (dates kept as `{"$date": ISO}`), gzip,
 * then, when a key is configured, AES-256-GCM. A small header says which, so a reader never
 * guesses: "SFA1", one flag byte, then for encrypted objects the key id (8 bytes), the 12-byte
 * IV and the 16-byte GCM tag before the ciphertext. The header (with the key id) is the GCM's
 * additional data, so changing a flag or an id is caught like any other change. Flags: 0 plain,
 * 2 sealed with the key the id names; 1 is the format before key ids (no id: every configured
 * key is tried), still read, never written.
 */
const MAGIC = Buffer.from('SFA1');
const FLAG_PLAIN = 0;
const FLAG_ENCRYPTED_NO_ID = 1;
const FLAG_ENCRYPTED = 2;
const KEY_ID_BYTES = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A stored object that does not decode: tampered, truncated, or sealed with another key. */
export class ArchiveObjectCorruptError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('operation_failed', message, [], options);
  }
}

/** An AES-256 key and its id (archiveKeyId), which each object it seals carries. */
export interface ArchiveKey {
  id: string;
  key: Buffer;
}

/**
 * The id of a key, as objects carry it and errors name it: the first 8 bytes of a SHA-256 of
 * the key (with a label of its own, so it is no hash of the key found anywhere else), 16 hex
 * digits. Derived, never chosen: an operator cannot give two keys one id, and the id reveals
 * nothing of the key.
 */
export function archiveKeyId(key: Buffer): string {
  return createHash('sha256')
    .update('screenfleet archive key id\0')
    .update(key)
    .digest()
    .subarray(0, KEY_ID_BYTES)
    .toString('hex');
}

/**
 * The keys an archive works with: the writer seals every new object (none: objects are written
 * plain); every reader (the writer first) opens the objects that name it.
 */
export interface ArchiveKeyring {
  writer?: ArchiveKey;
  readers: readonly ArchiveKey[];
}

/** A keyring of these keys, newest first: the first writes, all read. */
export function archiveKeyring(keys: readonly Buffer[]): ArchiveKeyring {
  const readers = keys.map((key) => ({ id: archiveKeyId(key), key }));
  return readers[0] ? { writer: readers[0], readers } : { readers };
}

/**
 * What opens objects: the keys, and whether a plain object may be read. It may while the
 * archive has plain objects (written before a key was configured, until `archive:rekey` seals
 * them); once it has none, a plain object was put there by someone else (a forged or
 * downgraded object), and is refused.
 */
export interface OpenKeys {
  readers: readonly ArchiveKey[];
  acceptPlain: boolean;
}

/** What sealed an object, from its header: a key id, "plain", or "no-id" (before key ids). */
export type Seal = string;
export const PLAIN: Seal = 'plain';
export const NO_ID: Seal = 'no-id';

export interface EncodedChunk {
  body: Buffer;
  /** Hex SHA-256 of `body`, the bytes the store holds. */
  sha256: string;
}

export const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** `writer` seals it; absent for no encryption. */
export function encodeChunk(docs: readonly ContentDocument[], writer?: ArchiveKey): EncodedChunk {
  const lines = docs.map((doc) => JSON.stringify(doc, keepDates)).join('\n');
  return sealBytes(gzipSync(Buffer.from(lines, 'utf8')), writer);
}

/** Checks `sha256` (when given) before anything else, then decrypts and decompresses. */
export function decodeChunk(
  body: Buffer,
  keys: OpenKeys,
  options: { name: string; sha256?: string },
): ContentDocument[] {
  const gz = openBytes(body, keys, options);
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
export function sealBytes(plain: Buffer, writer?: ArchiveKey): EncodedChunk {
  if (!writer) {
    const body = Buffer.concat([MAGIC, Buffer.from([FLAG_PLAIN]), plain]);
    return { body, sha256: sha256Hex(body) };
  }
  const header = Buffer.concat([
    MAGIC,
    Buffer.from([FLAG_ENCRYPTED]),
    Buffer.from(writer.id, 'hex'),
  ]);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', writer.key, iv);
  cipher.setAAD(header);
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  const body = Buffer.concat([header, iv, cipher.getAuthTag(), ciphertext]);
  return { body, sha256: sha256Hex(body) };
}

/**
 * What sealed a stored object, read from its first bytes (no key needed); undefined when they
 * are no archive header.
 */
export function sealOf(body: Buffer): Seal | undefined {
  if (body.length < MAGIC.length + 1 || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    return undefined;
  }
  const flags = body[MAGIC.length];
  if (flags === FLAG_PLAIN) return PLAIN;
  if (flags === FLAG_ENCRYPTED_NO_ID) return NO_ID;
  const idEnd = MAGIC.length + 1 + KEY_ID_BYTES;
  if (flags === FLAG_ENCRYPTED && body.length >= idEnd) {
    return body.subarray(MAGIC.length + 1, idEnd).toString('hex');
  }
  return undefined;
}

/** Bytes an object's header needs for sealOf. */
export const SEAL_HEADER_BYTES = MAGIC.length + 1 + KEY_ID_BYTES;

export function openBytes(
  body: Buffer,
  keys: OpenKeys,
  options: { name: string; sha256?: string },
): Buffer {
  const { name } = options;
  if (options.sha256 !== undefined && sha256Hex(body) !== options.sha256) {
    throw new ArchiveObjectCorruptError(
      `archive object ${name} does not match its recorded SHA-256 (tampered or truncated)`,
    );
  }
  const seal = sealOf(body);
  if (seal === undefined) {
    throw new ArchiveObjectCorruptError(
      `archive object ${name} has no archive header (or unknown flags)`,
    );
  }
  if (seal === PLAIN) {
    if (!keys.acceptPlain) {
      throw new ArchiveObjectCorruptError(
        `archive object ${name} is not encrypted, but this archive holds no plain objects (refused: not written by this archive)`,
      );
    }
    return body.subarray(MAGIC.length + 1);
  }
  if (seal === NO_ID) {
    // Written before key ids: whichever configured key opens it.
    const sealed = body.subarray(MAGIC.length + 1);
    for (const reader of keys.readers) {
      const plain = tryDecrypt(body.subarray(0, MAGIC.length + 1), sealed, reader.key);
      if (plain) return plain;
    }
    throw new ArchiveObjectCorruptError(
      keys.readers.length === 0
        ? `archive object ${name} is encrypted and no ARCHIVE_ENCRYPTION_KEYS are configured`
        : `archive object ${name} (encrypted before key ids) opens with none of the ${keys.readers.length} configured keys: tampered, or sealed with a key not configured`,
    );
  }
  const reader = keys.readers.find((candidate) => candidate.id === seal);
  if (!reader) {
    throw new ArchiveObjectCorruptError(
      `archive object ${name} is sealed with key ${seal}, which is not among ARCHIVE_ENCRYPTION_KEYS`,
    );
  }
  const plain = tryDecrypt(
    body.subarray(0, SEAL_HEADER_BYTES),
    body.subarray(SEAL_HEADER_BYTES),
    reader.key,
  );
  if (!plain) {
    throw new ArchiveObjectCorruptError(
      `archive object ${name} fails decryption with its key ${seal}: tampered or truncated`,
    );
  }
  return plain;
}

/** IV, tag and ciphertext opened with `key` and `header` as additional data; undefined if not. */
function tryDecrypt(header: Buffer, sealed: Buffer, key: Buffer): Buffer | undefined {
  if (sealed.length < IV_BYTES + TAG_BYTES) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(header);
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    return undefined;
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

import { createCipheriv, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { buildDoc } from '../../test/memory-ports';
import {
  ArchiveObjectCorruptError,
  archiveKeyId,
  archiveKeyring,
  decodeChunk,
  encodeChunk,
  sealBytes,
  sealOf,
  sha256Hex,
  type OpenKeys,
} from './chunk-codec';

const [writer, older] = archiveKeyring([randomBytes(32), randomBytes(32)]).readers;
const docs = [buildDoc(), buildDoc({ file_path: '/media/a.mp4', transcription: null }), buildDoc()];
const keysOf = (...readers: Array<typeof writer>): OpenKeys => ({
  readers: readers.filter((r) => r !== undefined),
  acceptPlain: true,
});
const noKeys = keysOf();

/** An object as this archive wrote it before key ids: flag 1, no id, the 5-byte header as AAD. */
function legacySealed(plain: Buffer, key: Buffer): Buffer {
  const header = Buffer.from([...Buffer.from('SFA1'), 1]);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(header);
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([header, iv, cipher.getAuthTag(), ciphertext]);
}

describe('chunk codec', () => {
  it.each([
    ['plain', undefined],
    ['encrypted', writer],
  ])(
    'when a chunk is encoded %s and decoded, then the documents come back equal, dates as dates',
    (_name, k) => {
      const encoded = encodeChunk(docs, k);

      const decoded = decodeChunk(encoded.body, keysOf(writer), {
        name: 'c',
        sha256: encoded.sha256,
      });

      expect(decoded).toEqual(docs);
      expect(decoded[0]!.timestamp).toBeInstanceOf(Date);
      expect(encoded.sha256).toBe(sha256Hex(encoded.body));
    },
  );

  it('when encrypted, then the stored bytes do not contain the text, and without keys it does not open', () => {
    const encoded = encodeChunk([buildDoc({ app_name: 'SecretBankingApp' })], writer);
    const plain = encodeChunk([buildDoc({ app_name: 'SecretBankingApp' })]);

    expect(encoded.body.includes('SecretBankingApp')).toBe(false);
    expect(decodeChunk(plain.body, noKeys, { name: 'p' })[0]!.app_name).toBe('SecretBankingApp');
    expect(() => decodeChunk(encoded.body, noKeys, { name: 'e' })).toThrow(
      `archive object e is sealed with key ${writer!.id}, which is not among ARCHIVE_ENCRYPTION_KEYS`,
    );
  });

  it('when a key id is derived, then it is 16 hex digits, the same for the same key, and the header carries it', () => {
    const key = Buffer.alloc(32, 9);

    expect(archiveKeyId(key)).toMatch(/^[0-9a-f]{16}$/);
    expect(archiveKeyId(Buffer.alloc(32, 9))).toBe(archiveKeyId(key));
    expect(archiveKeyId(Buffer.alloc(32, 8))).not.toBe(archiveKeyId(key));
    expect(sealOf(sealBytes(Buffer.from('x'), writer).body)).toBe(writer!.id);
    expect(sealOf(sealBytes(Buffer.from('x')).body)).toBe('plain');
    expect(sealOf(Buffer.from('nonsense'))).toBeUndefined();
  });

  it('when several keys are configured, then each object opens with the key its header names, old and new alike', () => {
    const byOld = encodeChunk(docs, older);
    const byNew = encodeChunk(docs, writer);
    const both = keysOf(writer, older);

    expect(decodeChunk(byOld.body, both, { name: 'old' })).toEqual(docs);
    expect(decodeChunk(byNew.body, both, { name: 'new' })).toEqual(docs);
    expect(() => decodeChunk(byOld.body, keysOf(writer), { name: 'old' })).toThrow(
      `sealed with key ${older!.id}, which is not among ARCHIVE_ENCRYPTION_KEYS`,
    );
  });

  it('when an object was written before key ids, then whichever configured key opens it does; none: it says so', () => {
    const body = legacySealed(gzipSync(Buffer.from(JSON.stringify(docs[0]))), older!.key);

    expect(sealOf(body)).toBe('no-id');
    expect(decodeChunk(body, keysOf(writer, older), { name: 'legacy' })).toHaveLength(1);
    expect(() => decodeChunk(body, keysOf(writer), { name: 'legacy' })).toThrow(
      /legacy \(encrypted before key ids\) opens with none of the 1 configured keys/,
    );
  });

  it('when one byte of an encrypted object is changed, then decoding fails with a clear error', () => {
    const { body } = encodeChunk(docs, writer);
    body[body.length - 3] = body[body.length - 3]! ^ 0xff;

    expect(() => decodeChunk(body, keysOf(writer), { name: 'chunks/x' })).toThrow(
      ArchiveObjectCorruptError,
    );
    expect(() => decodeChunk(body, keysOf(writer), { name: 'chunks/x' })).toThrow(
      `archive object chunks/x fails decryption with its key ${writer!.id}: tampered or truncated`,
    );
  });

  it('when the key id in the header is changed to another configured key, then decoding fails (the header is authenticated)', () => {
    const { body } = encodeChunk(docs, writer);
    Buffer.from(older!.id, 'hex').copy(body, 5);

    expect(sealOf(body)).toBe(older!.id);
    expect(() => decodeChunk(body, keysOf(writer, older), { name: 'c' })).toThrow(/tampered/);
  });

  it('when a plain object is truncated, then decoding fails (the gzip trailer is gone)', () => {
    const { body } = encodeChunk(docs);

    expect(() => decodeChunk(body.subarray(0, body.length - 10), noKeys, { name: 'c' })).toThrow(
      /does not decompress/,
    );
  });

  it('when the bytes differ from the recorded SHA-256, then decoding fails before anything else', () => {
    const { body, sha256 } = encodeChunk(docs);
    const other = Buffer.from(body);
    other[6] = other[6]! ^ 1;

    expect(() => decodeChunk(other, noKeys, { name: 'c', sha256 })).toThrow(
      /does not match its recorded SHA-256/,
    );
  });

  it('when the object is not an archive object at all, then it says so', () => {
    expect(() => decodeChunk(Buffer.from('hello'), noKeys, { name: 'c' })).toThrow(
      /no archive header/,
    );
  });

  it('when plain objects are not accepted (the archive holds none), then a plain object is refused', () => {
    const plain = encodeChunk(docs);
    const strict = { readers: [writer!], acceptPlain: false };

    expect(() => decodeChunk(plain.body, strict, { name: 'chunks/forged' })).toThrow(
      ArchiveObjectCorruptError,
    );
    expect(() => decodeChunk(plain.body, strict, { name: 'chunks/forged' })).toThrow(
      'archive object chunks/forged is not encrypted, but this archive holds no plain objects (refused: not written by this archive)',
    );
    expect(decodeChunk(plain.body, keysOf(writer), { name: 'chunks/old' })).toEqual(docs);
  });
});

import { randomBytes } from 'node:crypto';
import { buildDoc } from '../../test/memory-ports';
import { ArchiveObjectCorruptError, decodeChunk, encodeChunk, sha256Hex } from './chunk-codec';

const key = randomBytes(32);
const docs = [buildDoc(), buildDoc({ file_path: '/media/a.mp4', transcription: null }), buildDoc()];

describe('chunk codec', () => {
  it.each([
    ['plain', undefined],
    ['encrypted', key],
  ])(
    'when a chunk is encoded %s and decoded, then the documents come back equal, dates as dates',
    (_name, k) => {
      const encoded = encodeChunk(docs, k);

      const decoded = decodeChunk(encoded.body, k, { name: 'c', sha256: encoded.sha256 });

      expect(decoded).toEqual(docs);
      expect(decoded[0]!.timestamp).toBeInstanceOf(Date);
      expect(encoded.sha256).toBe(sha256Hex(encoded.body));
    },
  );

  it('when encrypted, then the stored bytes do not contain the text', () => {
    const encoded = encodeChunk([buildDoc({ app_name: 'SecretBankingApp' })], key);
    const plain = encodeChunk([buildDoc({ app_name: 'SecretBankingApp' })]);

    expect(encoded.body.length).toBeGreaterThan(0);
    expect(decodeChunk(plain.body, undefined, { name: 'p' })[0]!.app_name).toBe('SecretBankingApp');
    expect(() => decodeChunk(encoded.body, undefined, { name: 'e' })).toThrow(
      /encrypted and no ARCHIVE_ENCRYPTION_KEY/,
    );
  });

  it('when one byte of an encrypted object is changed, then decoding fails with a clear error', () => {
    const { body } = encodeChunk(docs, key);
    body[body.length - 3] = body[body.length - 3]! ^ 0xff;

    expect(() => decodeChunk(body, key, { name: 'chunks/x' })).toThrow(ArchiveObjectCorruptError);
    expect(() => decodeChunk(body, key, { name: 'chunks/x' })).toThrow(
      /chunks\/x fails decryption: tampered/,
    );
  });

  it('when a plain object is truncated, then decoding fails (the gzip trailer is gone)', () => {
    const { body } = encodeChunk(docs);

    expect(() => decodeChunk(body.subarray(0, body.length - 10), undefined, { name: 'c' })).toThrow(
      /does not decompress/,
    );
  });

  it('when the bytes differ from the recorded SHA-256, then decoding fails before anything else', () => {
    const { body, sha256 } = encodeChunk(docs);
    const other = Buffer.from(body);
    other[6] = other[6]! ^ 1;

    expect(() => decodeChunk(other, undefined, { name: 'c', sha256 })).toThrow(
      /does not match its recorded SHA-256/,
    );
  });

  it('when decrypted with another key, then decoding fails', () => {
    const { body } = encodeChunk(docs, key);

    expect(() => decodeChunk(body, randomBytes(32), { name: 'c' })).toThrow(/another key/);
  });

  it('when the object is not an archive object at all, then it says so', () => {
    expect(() => decodeChunk(Buffer.from('hello'), undefined, { name: 'c' })).toThrow(
      /no archive header/,
    );
  });

  it('when a key is configured and an object is not encrypted, then decoding refuses it', () => {
    const plain = encodeChunk(docs);

    expect(() => decodeChunk(plain.body, key, { name: 'chunks/forged' })).toThrow(
      ArchiveObjectCorruptError,
    );
    expect(() => decodeChunk(plain.body, key, { name: 'chunks/forged' })).toThrow(
      /chunks\/forged is not encrypted but ARCHIVE_ENCRYPTION_KEY is configured/,
    );
  });
});

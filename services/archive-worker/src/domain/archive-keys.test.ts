import { randomBytes } from 'node:crypto';
import { memoryArchiveStore } from '../../test/memory-ports';
import { openKeysFor, scanSeals, sealsReadable, unreadableAtStartMessage } from './archive-keys';
import { archiveKeyring, sealBytes } from './chunk-codec';

const [k1, k2] = [randomBytes(32), randomBytes(32)];
const ring = archiveKeyring([k2, k1]);
const [id2, id1] = ring.readers.map((r) => r.id);

describe('archive keys', () => {
  it('when the state says plain objects exist, or says nothing, or no key is configured, then plain objects are read; otherwise they are refused', () => {
    expect(openKeysFor(ring, { sealed_with: ['plain', id1!] }).acceptPlain).toBe(true);
    expect(openKeysFor(ring, {}).acceptPlain).toBe(true);
    expect(openKeysFor(archiveKeyring([]), { sealed_with: [id1!] }).acceptPlain).toBe(true);
    expect(openKeysFor(ring, { sealed_with: [id1!, id2!] }).acceptPlain).toBe(false);
    expect(openKeysFor(ring, { sealed_with: [] }).acceptPlain).toBe(false);
  });

  it('when every seal the state lists is a configured key or plain, then the keys are enough without reading the store', () => {
    expect(sealsReadable(ring, ['plain', id1!, id2!])).toBe(true);
    expect(sealsReadable(ring, [])).toBe(true);
    expect(sealsReadable(archiveKeyring([k2]), [id1!])).toBe(false);
    expect(sealsReadable(ring, undefined)).toBe(false); // an archive from before key ids
  });

  it('when the manifests are scanned, then their seals are listed and those no key opens are named, the first five, with the count', async () => {
    const archive = memoryArchiveStore();
    const put = (key: string, body: Buffer) => archive.objects.set(key, body);
    put('manifests/a.json.sfa', sealBytes(Buffer.from('{}')).body);
    put('manifests/b.json.sfa', sealBytes(Buffer.from('{}'), ring.readers[0]).body);
    for (let i = 0; i < 7; i += 1) {
      put(`manifests/c${i}.json.sfa`, sealBytes(Buffer.from('{}'), ring.readers[1]).body);
    }
    put('chunks/not-read.sfa', Buffer.from('not even a header'));

    const scan = await scanSeals(archive, archiveKeyring([k2]));

    expect(scan.seals).toEqual([id1, id2, 'plain'].sort());
    expect(scan.unreadableCount).toBe(7);
    expect(scan.unreadable.map((u) => u.key)).toEqual(
      [0, 1, 2, 3, 4].map((i) => `manifests/c${i}.json.sfa`),
    );
    expect(unreadableAtStartMessage(scan)).toMatch(
      new RegExp(
        `^the archive holds 7 manifests that none of the configured keys opens .*manifests/c0\\.json\\.sfa \\(sealed with key ${id1}, not among ARCHIVE_ENCRYPTION_KEYS\\).*; and 2 more\\. Add the missing keys`,
      ),
    );
    expect((await scanSeals(archive, ring)).unreadableCount).toBe(0);
  });
});

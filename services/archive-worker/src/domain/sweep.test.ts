import { randomBytes } from 'node:crypto';
import { buildDoc, memoryArchiveStore } from '../../test/memory-ports';
import { archiveKeyring, encodeChunk, sealBytes } from './chunk-codec';
import { buildManifest, chunkKeys } from './manifest';
import { sweepArchive } from './sweep';

const ring = archiveKeyring([randomBytes(32)]);
const keys = { readers: ring.readers, acceptPlain: false };

/** One item set uploaded twice (two chunk copies), its manifest naming `named` of them. */
function twoCopies(named: 0 | 1 | 'missing') {
  const archive = memoryArchiveStore();
  const docs = [buildDoc(), buildDoc()];
  const names = chunkKeys(docs);
  const copies = [encodeChunk(docs, ring.writer), encodeChunk(docs, ring.writer)];
  const chunkKeysOf = copies.map((copy) => names.chunk(copy.sha256));
  copies.forEach((copy, i) => archive.objects.set(chunkKeysOf[i]!, copy.body));
  const namedCopy = named === 'missing' ? encodeChunk(docs, ring.writer) : copies[named]!;
  const manifest = buildManifest(
    docs,
    { key: names.chunk(namedCopy.sha256), sha256: namedCopy.sha256, size: namedCopy.body.length },
    [],
    new Date(),
  );
  archive.objects.set(
    names.manifest,
    sealBytes(Buffer.from(JSON.stringify(manifest)), ring.writer).body,
  );
  return { archive, chunkKeysOf, manifestKey: names.manifest };
}

describe('sweep', () => {
  it('when a manifest names one of two copies, then the other goes and its bytes leave the count', async () => {
    const { archive, chunkKeysOf } = twoCopies(1);
    const other = archive.objects.get(chunkKeysOf[0]!)!.length;
    const total = [...archive.objects.values()].reduce((n, body) => n + body.length, 0);

    const report = await sweepArchive({ archive, keys });

    expect(report.orphans).toEqual({ count: 1, bytes: other });
    expect(report.storedBytes).toBe(total - other);
    expect([...archive.objects.keys()]).toContain(chunkKeysOf[1]);
    expect([...archive.objects.keys()]).not.toContain(chunkKeysOf[0]);
  });

  it('when a manifest names a chunk that is not there, or cannot be read, then every copy of its item set is kept and said why', async () => {
    const dangling = twoCopies('missing');
    const report = await sweepArchive({ archive: dangling.archive, keys });
    expect(report.orphans.count).toBe(0);
    expect(report.kept).toEqual([
      {
        itemSet: expect.any(String),
        reason: expect.stringMatching(/^its manifest names chunks\/.*, not there$/),
      },
    ]);

    const unreadable = twoCopies(0);
    const lost = await sweepArchive({
      archive: unreadable.archive,
      keys: { readers: archiveKeyring([randomBytes(32)]).readers, acceptPlain: false },
    });
    expect(lost.orphans.count).toBe(0);
    expect(lost.kept[0]!.reason).toMatch(
      /^its manifest cannot be read: .*not among ARCHIVE_ENCRYPTION_KEYS/,
    );
    expect(unreadable.archive.objects.size).toBe(3);
  });

  it('when a chunk and media files have no manifest at all, then they go; objects of other names stay', async () => {
    const archive = memoryArchiveStore();
    const names = chunkKeys([buildDoc()]);
    archive.objects.set(names.chunk('a'.repeat(64)), Buffer.alloc(10));
    archive.objects.set(names.media(0, '/m/v.mp4', 'b'.repeat(64)), Buffer.alloc(20));
    archive.objects.set('notes/readme.txt', Buffer.alloc(5));

    const report = await sweepArchive({ archive, keys });

    expect(report.orphans).toEqual({ count: 2, bytes: 30 });
    expect([...archive.objects.keys()]).toEqual(['notes/readme.txt']);
    expect(report.storedBytes).toBe(5);
  });
});

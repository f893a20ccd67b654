// For sqlite-writer.int.test.ts: run as root on a small tmpfs mounted at argv[2] (a mount
// namespace of its own). Fills the disk with 50-item batches until one is refused, checks what
// of it was stored, makes room and sends it again. Prints one JSON line.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  createSqliteContentStore,
  openSqliteDatabase,
  type ContentDocument,
} from '@screenfleet/storage';

const [dir] = process.argv.slice(2);

function batch(n: number): ContentDocument[] {
  const at = new Date(Date.UTC(2026, 10, 1) + n * 1000);
  return Array.from({ length: 50 }, (_, i) => ({
    _id: `full-${n}-${i}`,
    device_name: 'disk',
    content_type: 'frames' as const,
    timestamp: at,
    timestamp_source: 'client' as const,
    received_at: at,
    file_path: `/frames/${n}-${i}.mp4`,
    app_name: 'Editor',
    window_name: 'notes',
    // Words that do not repeat much: the search index grows with the items.
    ocr_results: [
      {
        text: Array.from({ length: 60 }, (_, w) => `w${n}x${i}x${w}`).join(' '),
        confidence: 0.9,
        text_json: null,
        ocr_engine: null,
        focused: null,
      },
    ],
    tags: [],
    transcription: null,
  }));
}

async function main() {
  const filler = path.join(dir!, 'filler');
  writeFileSync(filler, Buffer.alloc(1024 * 1024)); // the room made later
  const database = await openSqliteDatabase(path.join(dir!, 'screenfleet.db'));
  const store = createSqliteContentStore({ database });
  await store.ensureIndexes();
  const stored = async (docs: ContentDocument[]) => {
    const ids = new Set(docs.map((doc) => doc._id));
    let n = 0;
    for await (const chunk of store.scanRange(
      { to: new Date(Date.UTC(2100, 0)) },
      { chunkSize: 5000 },
    ))
      n += chunk.filter((doc) => ids.has(doc._id)).length;
    return n;
  };
  let failedBatch = -1;
  let failure: unknown;
  for (let n = 0; n < 1000; n++) {
    try {
      await store.insertItems(batch(n));
    } catch (error) {
      failedBatch = n;
      failure = error;
      break;
    }
  }
  const before = Array.from({ length: Math.max(0, failedBatch) }, (_, n) => batch(n)).flat();
  const report = {
    failedBatch,
    batchesBefore: failedBatch,
    errorClass: failure instanceof Error ? failure.name : String(failure),
    errorCode: String((failure as { cause?: { code?: unknown } })?.cause?.code),
    failedStored: await stored(batch(failedBatch)),
    storedBefore: await stored(before),
    retried: undefined as unknown,
    storedAfter: 0,
  };
  rmSync(filler);
  report.retried = await store.insertItems(batch(failedBatch));
  report.storedAfter = await stored([...before, ...batch(failedBatch)]);
  await database.close();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});

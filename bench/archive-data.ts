import { MongoClient } from 'mongodb';
import { createMongoContentStore, type ContentDocument } from '@screenfleet/storage';

/** The same bounded data set for every phase and run, so the phases differ only in the archiver. */
export interface DataSetOptions {
  /** Items older than the retention: what a pass must archive. */
  items: number;
  /** Items newer than the retention: what must stay. */
  recent: number;
  devices: number;
  retentionDays: number;
}

const DAY_MS = 86_400_000;

// Screen text as OCR returns it: words of an office screen, some digits, line breaks.
const vocabulary = (
  'invoice meeting deploy function return customer total screen window build pipeline ' +
  'quarterly report revenue Slack message thread reply merge request review approved ' +
  'Monday Tuesday agenda notes budget forecast sprint ticket JIRA-4821 error warning ' +
  'const await export import interface settings account password reset login dashboard'
).split(' ');

/** Deterministic (mulberry32): every phase gets byte-identical items. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function ocrText(random: () => number): string {
  const length = 1000 + Math.floor(random() * 1000); // 1-2 KB, as a screen of text
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const word =
      random() < 0.1
        ? String(Math.floor(random() * 100_000))
        : vocabulary[Math.floor(random() * vocabulary.length)]!;
    parts.push(word, random() < 0.08 ? '\n' : ' ');
    size += word.length + 1;
  }
  return parts.join('').slice(0, length);
}

/** The documents as the ingest worker stores them; `now` fixes what counts as old. */
export function buildDataSet(options: DataSetOptions, now: Date): ContentDocument[] {
  const random = prng(42);
  const docs: ContentDocument[] = [];
  const oldFrom = now.getTime() - (options.retentionDays + 60) * DAY_MS;
  const oldSpan = 59 * DAY_MS; // ends a day before the cutoff
  const recentFrom = now.getTime() - (options.retentionDays - 1) * DAY_MS;
  const recentSpan = (options.retentionDays - 2) * DAY_MS;
  const total = options.items + options.recent;
  for (let i = 0; i < total; i += 1) {
    const old = i < options.items;
    const device = `bench-device-${i % options.devices}`;
    const index = old ? i : i - options.items;
    const count = old ? options.items : options.recent;
    // Whole seconds, several devices per second: equal timestamps across chunk borders happen.
    const offset = Math.floor(((index / count) * (old ? oldSpan : recentSpan)) / 1000) * 1000;
    const timestamp = new Date((old ? oldFrom : recentFrom) + offset);
    const audio = i % 10 === 9;
    docs.push({
      _id: `bench|${device}|${old ? 'old' : 'recent'}|${index}`,
      device_name: device,
      content_type: audio ? 'transcription' : 'frames',
      timestamp,
      timestamp_source: 'client',
      received_at: new Date(timestamp.getTime() + 1500),
      file_path: audio ? null : `/captures/${device}/monitor_1/${timestamp.toISOString()}.mp4`,
      app_name: audio ? null : ['Code', 'Firefox', 'Slack', 'Excel'][i % 4]!,
      window_name: audio ? null : `window ${i % 23}`,
      ocr_results: audio
        ? []
        : [
            {
              text: ocrText(random),
              confidence: Math.round(random() * 100) / 100,
              text_json: null,
              ocr_engine: 'tesseract',
              focused: i % 3 === 0,
            },
          ],
      tags: i % 5 === 0 ? ['work'] : [],
      transcription: audio ? { text: ocrText(random), engine: 'whisper' } : null,
    });
  }
  return docs;
}

/** A fresh database holding the data set, with the store's indexes (both phases get them). */
export async function insertDataSet(
  url: string,
  database: string,
  docs: ContentDocument[],
): Promise<void> {
  const client = await MongoClient.connect(url);
  await client.db(database).dropDatabase();
  await client.close();
  const store = createMongoContentStore({ url, database });
  try {
    await store.ensureIndexes();
    const batches: ContentDocument[][] = [];
    for (let i = 0; i < docs.length; i += 1000) batches.push(docs.slice(i, i + 1000));
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = next++; i < batches.length; i = next++) {
          const result = await store.insertItems(batches[i]!);
          if (result.inserted !== batches[i]!.length) throw new Error('data set insert incomplete');
        }
      }),
    );
  } finally {
    await store.close();
  }
}

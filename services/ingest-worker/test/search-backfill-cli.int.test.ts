import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createMongoContentStore, type ContentDocument } from '@screenfleet/storage';
import { MongoClient } from 'mongodb';
import { databaseName, mongoUrl } from '../../../test/services';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../dist/bin/backfill-search-terms.js');

describe('npm run search:backfill', () => {
  const database = databaseName('search_backfill_cli');
  let client: MongoClient;

  beforeAll(async () => {
    client = await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
  });

  afterAll(async () => {
    await client.db(database).dropDatabase();
    await client.close();
  });

  const item = (i: number): ContentDocument => ({
    _id: `item-${i}`,
    device_name: 'laptop',
    content_type: 'frames',
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
    timestamp_source: 'client',
    received_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
    file_path: `/frames/${i}.mp4`,
    app_name: 'Mail',
    window_name: 'Inbox',
    ocr_results: [
      { text: `Invoice ${i}`, confidence: null, text_json: null, ocr_engine: null, focused: null },
    ],
    tags: [],
    transcription: null,
  });

  it("when run on the ingest worker's database, then items stored before search are found, and a second run has nothing to do", async () => {
    const old = Array.from({ length: 12 }, (_, i) => item(i));
    await client.db(database).collection<ContentDocument>('content_items').insertMany(old);
    const env = {
      PATH: process.env.PATH ?? '',
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: database,
    };

    const first = await run(process.execPath, [cli, '--chunk-size', '5'], { env });
    const second = await run(process.execPath, [cli], { env });

    expect(JSON.parse(first.stdout)).toEqual({ scanned: 12, updated: 12 });
    expect(JSON.parse(second.stdout)).toEqual({ scanned: 0, updated: 0 });
    const store = createMongoContentStore({ url: mongoUrl(), database });
    try {
      const found = await store.search({
        terms: ['invoice'],
        contentTypes: ['frames'],
        order: 'newest',
        limit: 100,
        offset: 0,
      });
      expect(found).toEqual({ items: [...old].reverse(), total: 12 });
    } finally {
      await store.close();
    }
  });

  it('when the chunk size is not a positive integer, then it exits 1 saying so', async () => {
    const result = await run(process.execPath, [cli, '--chunk-size', 'many'], {
      env: { PATH: process.env.PATH ?? '', MONGODB_URL: mongoUrl() },
    }).catch((error: { code: number; stdout: string }) => error);

    expect(result).toMatchObject({ code: 1 });
    expect((result as { stdout: string }).stdout).toMatch(/--chunk-size must be an integer/);
  });
});

/**
 * The embedded mode runs no SQLite on its event loop (docs/adr/0011): writes wait in the writer
 * thread, reads run on libsql's threads. Shown from outside, on `npm start`'s process: while a
 * write waits seconds for the file's lock, and while a search runs until its deadline, the server
 * answers other requests at once; the search is stopped at its deadline and answered 503 saying
 * so, not left to run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createSqliteContentStore,
  openSqliteConnection,
  openSqliteDatabase,
  type ContentDocument,
} from '@screenfleet/storage';
import { buildItem, t } from '../libs/storage/test/content-store.contract';
import { buildBatch } from './support/content';
import { tokens } from './support/gateway';
import { scrapeMetrics } from './support/metrics';
import { startLauncher, type Launcher } from './support/system';

const ITEMS = 300_000;
/**
 * The second case's gateway wait for a search; the store may run it 330 ms (searchTimings), half
 * what the heavy search needs on an idle machine, and far more than a search for an unheard word
 * needs on a loaded one. The first case keeps the default wait (10 s), so its searches' answers
 * do not depend on how busy the machine is.
 */
const SHORT_SEARCH_TIMEOUT_MS = 600;

describe('embedded mode: no SQLite on the event loop', () => {
  let dataDir: string;
  let launcher: Launcher;
  let api: string;
  let ops: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sf-off-loop-'));
    // Items that all hold the words "ls" and "la", many times, for a search that reads and
    // ranks every one of them: 0.6 s on an idle machine, 1 s on a loaded one.
    const database = await openSqliteDatabase(path.join(dataDir, 'screenfleet.db'));
    const store = createSqliteContentStore({ database });
    for (let first = 0; first < ITEMS; first += 5000) {
      const docs: ContentDocument[] = Array.from({ length: 5000 }, (_, i) =>
        buildItem({
          _id: `preload-${first + i}`,
          timestamp: t(first + i),
          ocr_results: [
            {
              text: 'ls la '.repeat(40),
              confidence: null,
              text_json: null,
              ocr_engine: null,
              focused: null,
            },
          ],
        }),
      );
      await store.insertItems(docs);
    }
    await database.close();
    // 300,000 items with their search entries: about 15 s on an idle machine, a minute or more
    // on a busy one.
  }, 180_000);

  /** `npm start` on the preloaded file; one at a time, each case its own. */
  async function start(settings: Record<string, string> = {}): Promise<void> {
    launcher = startLauncher({
      DATA_DIR: dataDir,
      GATEWAY_PORT: '0',
      GATEWAY_OPS_PORT: '0',
      GATEWAY_TOKENS: JSON.stringify([tokens.all]),
      LOG_LEVEL: 'warn',
      ...settings,
    });
    api = `http://127.0.0.1:${await launcher.apiPort}`;
    ops = launcher.opsUrl();
    // Served once before anything is timed: a fresh process's first search opens its readers
    // and compiles its code paths (most of a second on a busy machine).
    expect((await timed(`${api}/search?q=unheard&limit=1`, { headers: auth })).status).toBe(200);
  }

  afterEach(async () => {
    await launcher?.stop('SIGINT');
  });

  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  const auth = { authorization: `Bearer ${tokens.all.token}` };

  /** Status and milliseconds of a request. */
  async function timed(url: string, init: RequestInit = {}) {
    const started = performance.now();
    const response = await fetch(url, init);
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  }

  it('when a write waits 2 s for a lock another process holds, then health checks and searches are answered meanwhile, and the write lands after', async () => {
    await start();
    const holder = openSqliteConnection(path.join(dataDir, 'screenfleet.db'));
    holder.exec('BEGIN IMMEDIATE');
    let settled = false;
    const add = fetch(`${api}/add`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(buildBatch('locked-out', 0, 3)),
    }).then(async (response) => {
      settled = true;
      return { status: response.status, body: await response.text() };
    });

    // Time passing is the subject here: the lock is held for 2 s, and the server keeps
    // answering (each attempt of the writer waits up to 1 s for the lock, in its thread).
    const held = performance.now() + 2000;
    const answers: Array<{ status: number; ms: number }> = [];
    while (performance.now() < held) {
      answers.push(await timed(`${ops}/healthz`));
      // A search that costs the store nothing (no item holds the word).
      answers.push(await timed(`${api}/search?q=unheard&limit=1`, { headers: auth }));
    }
    expect(settled).toBe(false);
    holder.exec('ROLLBACK');
    holder.close();

    expect(answers.length).toBeGreaterThan(10);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    // Blocked by a synchronous wait, a request sent as an attempt began would wait the whole
    // second of it (and fewer than 10 would be answered in the 2 s).
    expect(Math.max(...answers.map((answer) => answer.ms))).toBeLessThan(1000);
    expect(await add).toMatchObject({ status: 200 });
  });

  it('when a search runs past its deadline, then it is stopped there and answered 503 saying so, while other requests are answered, and the next search is served', async () => {
    await start({ GATEWAY_SEARCH_TIMEOUT: `${SHORT_SEARCH_TIMEOUT_MS}ms` });
    const events: string[] = [];
    const heavy = fetch(
      // Every item matches; the window filter matches none, so all are read and ranked.
      `${api}/search?q=ls+la&window_name=no+such+window&order=relevance`,
      { headers: auth },
    ).then(async (response) => {
      events.push('search answered');
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: (await response.json()) as { message?: string },
      };
    });
    const health = await timed(`${ops}/healthz`);
    events.push('health answered');

    const stopped = await heavy;
    expect(health.status).toBe(200);
    expect(events).toEqual(['health answered', 'search answered']);
    expect(stopped.status).toBe(503);
    expect(stopped.retryAfter).toBe('5');
    expect(stopped.body.message).toMatch(
      /^the search was stopped at its deadline: the search ran past its deadline \(330 ms\)/,
    );

    // Stopped, not running on: the readers serve the next search at once.
    const next = await timed(`${api}/search?q=unheard&limit=1`, { headers: auth });
    expect(next.status).toBe(200);
  });

  it('when batches are added, then the ops port shows the store writing: its transactions, slow commits, WAL and checkpoint passes', async () => {
    await start();
    const metric = async (sample: string) => (await scrapeMetrics(ops))(sample);
    const before = await metric('sqlite_transactions_total');

    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${api}/add`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(buildBatch('metered', i * 10, 10)),
      });
      expect(response.status).toBe(200);
    }

    expect(await metric('sqlite_transactions_total')).toBeGreaterThanOrEqual((before ?? 0) + 3);
    expect(await metric('sqlite_wal_bytes')).toBeGreaterThan(0);
    expect(await metric('sqlite_slow_commits_total')).toBeGreaterThanOrEqual(0);
    expect(await metric('sqlite_reads_held_total')).toBeGreaterThanOrEqual(0);
    expect(
      await metric('sqlite_checkpoint_passes_total{outcome="restarted"}'),
    ).toBeGreaterThanOrEqual(0);
  });
});

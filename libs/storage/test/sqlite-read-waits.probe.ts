/**
 * How long trivial reads wait beside sustained writes (docs/adr/0011): PROBE_LOOPS insert loops
 * (50 items a batch) into a fresh file, and a `SELECT 1` every 5 ms, for PROBE_SECONDS; prints
 * the reads over 100 ms, the slowest, the time spent in them, the reads the checkpointer held,
 * its passes by outcome and the WAL's peak, as one JSON line. Run from the repository's root:
 * npx tsx --tsconfig tsconfig.check.json libs/storage/test/sqlite-read-waits.probe.ts
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSqliteContentStore, openSqliteDatabase } from '@screenfleet/storage';
import { buildItem, t } from './content-store.contract';

const LOOPS = Number(process.env.PROBE_LOOPS ?? 8);
const SECONDS = Number(process.env.PROBE_SECONDS ?? 20);
const SLOW_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-read-waits-'));
  const file = path.join(dir, 'screenfleet.db');
  const passes: Record<string, number> = {};
  const database = await openSqliteDatabase(file, {
    checkpointer: { onPass: (outcome) => (passes[outcome] = (passes[outcome] ?? 0) + 1) },
  });
  const store = createSqliteContentStore({ database });
  await store.ensureIndexes();
  const text = 'words of a screen '.repeat(100);
  const end = performance.now() + SECONDS * 1000;
  let items = 0;
  const writeLoop = async (loop: number) => {
    for (let batch = 0; performance.now() < end; batch++) {
      await store.insertItems(
        Array.from({ length: 50 }, (_, i) =>
          buildItem({
            _id: `item-${loop}-${batch}-${i}`,
            timestamp: t(batch),
            ocr_results: [
              { text, confidence: 0.9, text_json: null, ocr_engine: 'tesseract', focused: true },
            ],
          }),
        ),
      );
      items += 50;
    }
  };
  const latencies: number[] = [];
  let walPeakBytes = 0;
  const readLoop = async () => {
    while (performance.now() < end) {
      const started = performance.now();
      await database.readers.query('SELECT 1 AS one', []);
      latencies.push(performance.now() - started);
      try {
        walPeakBytes = Math.max(walPeakBytes, statSync(`${file}-wal`).size);
      } catch {
        // no WAL yet
      }
      await sleep(5);
    }
  };
  await Promise.all([...Array.from({ length: LOOPS }, (_, loop) => writeLoop(loop)), readLoop()]);
  await database.close();
  rmSync(dir, { recursive: true, force: true });

  const slow = latencies.filter((ms) => ms > SLOW_MS);
  console.log(
    JSON.stringify({
      loops: LOOPS,
      seconds: SECONDS,
      items,
      reads: latencies.length,
      reads_over_100ms: slow.length,
      max_ms: Math.round(Math.max(...latencies)),
      slow_total_s: Number((slow.reduce((sum, ms) => sum + ms, 0) / 1000).toFixed(1)),
      wal_peak_mb: Number((walPeakBytes / 2 ** 20).toFixed(1)),
      held_reads: database.readers.stats().held,
      passes,
    }),
  );
}

void main();

/**
 * bench:embedded — end-to-end ingest through `npm start`'s embedded process (HTTP -> in-process
 * bus -> ingest worker -> SQLite file) against a raw baseline measured in the same run. Bounded:
 * BENCH_BATCHES batches of BENCH_ITEMS items per phase, 2 minutes at most per phase; traffic only
 * to 127.0.0.1. Prints one JSON line last.
 *
 * Baseline: the same documents (as the ingest worker makes them) inserted into the same kind of
 * SQLite file (openSqliteDatabase: WAL, synchronous=FULL) by the same adapter, 100 items per
 * transaction: no HTTP, no validation, no bus.
 * Ours: the launcher (bin/start.ts, embedded) as its own process, load from a third process
 * (bench/ingest-load.ts). Then POST /add latency at half the measured maximum rate, and the
 * server's peak RSS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddRequest } from '@screenfleet/contracts';
import { toDocuments } from '@screenfleet/ingest-worker';
import { createSqliteContentStore, openSqliteDatabase } from '@screenfleet/storage';
import { buildBatch } from '../test/support/content';
import { startLauncher } from '../test/support/system';
import { peakRssMb, runIngestLoad } from './load-runner';
import { median, percentiles } from './stats';

const BATCHES = Number(process.env.BENCH_BATCHES ?? 500);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TOKEN = 'bench-token-0123456789abcdef';

function log(message: string): void {
  process.stderr.write(`[bench:embedded] ${message}\n`);
}

async function baseline(dir: string, device: string): Promise<number> {
  const database = await openSqliteDatabase(path.join(dir, 'baseline.db'));
  const store = createSqliteContentStore({ database });
  await store.ensureIndexes();
  const receivedAt = new Date().toISOString();
  const docs = Array.from({ length: BATCHES }, (_, i) =>
    toDocuments({
      received_at: receivedAt,
      request: buildBatch(device, i * ITEMS, ITEMS) as AddRequest,
    }),
  ).flat();
  const started = performance.now();
  for (let i = 0; i < docs.length; i += 100) await store.insertItems(docs.slice(i, i + 100));
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  await database.close();
  return docs.length / seconds;
}

const load = (url: string, device: string, rate = 0) =>
  runIngestLoad({
    url,
    token: TOKEN,
    device,
    batches: BATCHES,
    items: ITEMS,
    concurrency: CONCURRENCY,
    rate,
  });

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-bench-embedded-'));
  const launcher = startLauncher({
    DATA_DIR: path.join(dir, 'data'),
    GATEWAY_PORT: '0',
    GATEWAY_OPS_PORT: '0',
    GATEWAY_TOKENS: JSON.stringify([{ id: 'bench', token: TOKEN, scopes: ['ingest'] }]),
    LOG_LEVEL: 'warn',
  });
  try {
    const url = `http://127.0.0.1:${await launcher.apiPort}`;
    const ours: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      raw.push(await baseline(dir, `raw-${i}`));
      rmSync(path.join(dir, 'baseline.db'), { force: true });
      const result = await load(url, `ours-${i}`);
      ours.push((BATCHES * ITEMS) / result.seconds);
      log(`run ${i + 1}: ours ${Math.round(ours[i]!)} items/s, baseline ${Math.round(raw[i]!)}`);
    }
    const maxBatchesPerSecond = median(ours) / ITEMS;
    const half = await load(url, 'half', maxBatchesPerSecond / 2);
    const result = {
      bench: 'embedded',
      batches: BATCHES,
      items_per_batch: ITEMS,
      concurrency: CONCURRENCY,
      runs: RUNS,
      ours_items_per_s: Math.round(median(ours)),
      baseline_items_per_s: Math.round(median(raw)),
      ratio: Math.round((median(ours) / median(raw)) * 100) / 100,
      half_load_batches_per_s: Math.round(maxBatchesPerSecond / 2),
      post_add_ms: percentiles(half.latencies, [50, 99]),
      server_peak_rss_mb: peakRssMb(launcher.pid),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await launcher.stop('SIGINT');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * bench:embedded — end-to-end ingest through `npm start`'s embedded process (HTTP -> in-process
 * bus -> ingest worker -> the SQLite writer thread) against a raw baseline measured in the same
 * run. Bounded: BENCH_BATCHES batches of BENCH_ITEMS items per phase, 2 minutes at most per
 * phase, searches for as long as one load phase; traffic only to 127.0.0.1. Prints one JSON line
 * last.
 *
 * Baseline: the same documents (as the ingest worker makes them) into the same kind of SQLite
 * file by the same adapter (openSqliteDatabase + the content store: its writer thread, WAL,
 * synchronous=FULL) in transactions of 1,000 items, one after another: the store's own ceiling
 * for these documents, with no HTTP, no validation, no bus; its file kept over the runs as the
 * server's is, so that each run compares inserts into files of one size.
 * Ours: the launcher (bin/start.ts, embedded) as its own process, load from a third process
 * (bench/ingest-load.ts), BENCH_RUNS runs alternating with the baseline; the medians compared.
 * Then the latency floor: LONE_BATCHES batches one at a time, through the server (POST /add) and
 * into the baseline's file by the store alone (a transaction each). Then POST /add latency at
 * half the measured maximum rate, and the server's peak RSS: the one process, its writer thread
 * and libsql's reader threads together (VmHWM).
 * Then the same half load into a copy of bench:search's 1M-item file (bench/search-dataset.ts),
 * while this process runs relevance searches for a common word over all of it, back to back:
 * POST /add latency, every status of both and the WAL's peak size; and the same into another
 * copy with no search, the baseline for what the searches cost (each after a warm-up).
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddRequest } from '@screenfleet/contracts';
import { toDocuments } from '@screenfleet/ingest-worker';
import { createSqliteContentStore, openSqliteDatabase } from '@screenfleet/storage';
import { buildBatch } from '../test/support/content';
import { scrapeMetrics } from '../test/support/metrics';
import { startLauncher, type Launcher } from '../test/support/system';
import { peakRssMb, runIngestLoad } from './load-runner';
import { bandWords } from './search-data';
import { searchDataset } from './search-dataset';
import { median, percentiles } from './stats';

const BATCHES = Number(process.env.BENCH_BATCHES ?? 500);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** Items of the file searched during the last phase; 0 skips that phase. */
const SEARCH_ITEMS = Number(process.env.BENCH_SEARCH_ITEMS ?? 1_000_000);
const TOKEN = 'bench-token-0123456789abcdef';
const TOKENS = JSON.stringify([{ id: 'bench', token: TOKEN, scopes: ['ingest', 'search'] }]);

function log(message: string): void {
  process.stderr.write(`[bench:embedded] ${message}\n`);
}

/**
 * The baseline's file, kept over the runs as the server keeps its own: run i inserts into a
 * file holding what runs 1 to i-1 inserted on both sides (a bigger file costs more per insert:
 * a fresh file each run made the later runs' ratio a comparison of two file sizes).
 */
async function openBaseline(dir: string) {
  const file = path.join(dir, 'baseline.db');
  const database = await openSqliteDatabase(file);
  const store = createSqliteContentStore({ database });
  await store.ensureIndexes();
  return {
    /** Items per second inserting the run's documents in transactions of 1,000. */
    async run(device: string): Promise<number> {
      const receivedAt = new Date().toISOString();
      const docs = Array.from({ length: BATCHES }, (_, i) =>
        toDocuments({
          received_at: receivedAt,
          request: buildBatch(device, i * ITEMS, ITEMS) as AddRequest,
        }),
      ).flat();
      const started = performance.now();
      for (let i = 0; i < docs.length; i += 1000) await store.insertItems(docs.slice(i, i + 1000));
      return docs.length / ((performance.now() - started) / 1000);
    },
    /**
     * Each of `batches` batches' documents inserted alone, one after another, one transaction
     * each: what the store needs for one batch with nothing else to do (ms each).
     */
    async lone(device: string, batches: number): Promise<number[]> {
      const receivedAt = new Date().toISOString();
      const latencies: number[] = [];
      for (let i = 0; i < batches; i++) {
        const request = buildBatch(device, i * ITEMS, ITEMS) as AddRequest;
        const started = performance.now();
        await store.insertItems(toDocuments({ received_at: receivedAt, request }));
        latencies.push(performance.now() - started);
      }
      return latencies;
    },
    async close() {
      await database.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    },
  };
}

function launch(dataDir: string): Launcher {
  return startLauncher({
    DATA_DIR: dataDir,
    GATEWAY_PORT: '0',
    GATEWAY_OPS_PORT: '0',
    GATEWAY_TOKENS: TOKENS,
    LOG_LEVEL: 'warn',
  });
}

/** BATCHES batches of ITEMS items from CONCURRENCY clients, as fast as answered, unless told. */
const load = (
  url: string,
  device: string,
  { rate = 0, allowFailures = false, batches = BATCHES, concurrency = CONCURRENCY } = {},
) =>
  runIngestLoad(
    { url, token: TOKEN, device, batches, items: ITEMS, concurrency, rate },
    { allowFailures },
  );

/** Batches posted one at a time (and inserted alone by the store) for the latency floor. */
const LONE_BATCHES = Number(process.env.BENCH_LONE_BATCHES ?? 200);

/**
 * Relevance searches for `q` over everything, one after another, until `done` settles (at least
 * `least` of them).
 */
async function searchUntil(url: string, q: string, done: Promise<unknown>, least = 0) {
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => undefined);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  while (!finished || latencies.length < least) {
    const started = performance.now();
    const query = new URLSearchParams({ q, order: 'relevance' }).toString();
    const response = await fetch(`${url}/search?${query}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    await response.arrayBuffer();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    latencies.push(performance.now() - started);
  }
  return { latencies, statuses };
}

/** Batches posted to a fresh server before a measured phase (not counted). */
const WARMUP_BATCHES = 50;

/** The store's counters on the server's ops port (libs/modes sqlite-metrics.ts). */
async function storeCounters(launcher: Launcher) {
  const sample = await scrapeMetrics(launcher.opsUrl());
  const value = (name: string) => sample(name) ?? NaN;
  return {
    transactions: value('sqlite_transactions_total'),
    commits_over_30ms: value('sqlite_slow_commits_total'),
    reads_held: value('sqlite_reads_held_total'),
    passes_restarted: value('sqlite_checkpoint_passes_total{outcome="restarted"}'),
    passes_not_restarted: value('sqlite_checkpoint_passes_total{outcome="not_restarted"}'),
    passes_reads_outlasted: value('sqlite_checkpoint_passes_total{outcome="reads_outlasted"}'),
  };
}

/** What the store counted between two readings. */
function counted(
  before: Awaited<ReturnType<typeof storeCounters>>,
  after: Awaited<ReturnType<typeof storeCounters>>,
) {
  return Object.fromEntries(
    Object.entries(after).map(([name, n]) => [name, n - before[name as keyof typeof before]]),
  );
}

/** The largest size the file reaches while `done` is pending, sampled every 100 ms (MB). */
async function peakSizeMb(file: string, done: Promise<unknown>): Promise<number> {
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(peak, statSync(file).size);
    } catch {
      // not there yet, or started over meanwhile
    }
  };
  const timer = setInterval(sample, 100);
  await done.catch(() => undefined);
  clearInterval(timer);
  sample();
  return Math.round(peak / 104857.6) / 10;
}

/**
 * Half load into a fresh copy of the 1M-item file, while this process runs relevance searches
 * for a common word over all of it back to back, or with no search (the baseline: the big
 * file's own cost). Each server is warmed first (WARMUP_BATCHES batches and one search, reported
 * apart): a fresh process's first requests compile code and read the file's pages cold, which is
 * its start, not the steady state this measures.
 */
async function underSearches(dir: string, halfRate: number, searching: boolean) {
  const dataset = await searchDataset(SEARCH_ITEMS, log);
  const dataDir = path.join(dir, searching ? 'searched' : 'not-searched');
  mkdirSync(dataDir, { mode: 0o700 });
  let started = performance.now();
  const file = path.join(dataDir, 'screenfleet.db');
  copyFileSync(dataset, file); // the load writes into it
  log(`copied the ${SEARCH_ITEMS}-item file in ${Math.round(performance.now() - started)} ms`);
  const launcher = launch(dataDir);
  try {
    const url = `http://127.0.0.1:${await launcher.apiPort}`;
    const [word] = bandWords('common', 1);
    const warmup = await load(url, 'warm-up', {
      rate: halfRate,
      allowFailures: true,
      batches: WARMUP_BATCHES,
    });
    await searchUntil(url, word!, Promise.resolve(), 1);
    const countersBefore = await storeCounters(launcher);
    started = performance.now();
    const adding = load(url, 'under-search', { rate: halfRate, allowFailures: true });
    const walPeakMb = peakSizeMb(`${file}-wal`, adding);
    const searches = searching ? await searchUntil(url, word!, adding) : undefined;
    const added = await adding;
    const store = counted(countersBefore, await storeCounters(launcher));
    log(
      `${searching ? 'under searches' : 'no search'}: ${Math.round((performance.now() - started) / 1000)} s`,
    );
    return {
      warmup_post_add_ms: percentiles(warmup.latencies, [50, 99]),
      post_add_ms: percentiles(added.latencies, [50, 99]),
      post_add_statuses: added.statuses,
      wal_peak_mb: await walPeakMb,
      store,
      ...(searches && {
        searches: searches.latencies.length,
        search_ms: percentiles(searches.latencies, [50, 95]),
        search_statuses: searches.statuses,
      }),
      server_peak_rss_mb: peakRssMb(launcher.pid),
    };
  } finally {
    await launcher.stop('SIGINT');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-bench-embedded-'));
  const launcher = launch(path.join(dir, 'data'));
  try {
    const url = `http://127.0.0.1:${await launcher.apiPort}`;
    const ours: number[] = [];
    const raw: number[] = [];
    const baseline = await openBaseline(dir);
    let loneStore: number[] = [];
    let loneOurs: number[] = [];
    try {
      for (let i = 0; i < RUNS; i++) {
        raw.push(await baseline.run(`raw-${i}`));
        const result = await load(url, `ours-${i}`);
        ours.push((BATCHES * ITEMS) / result.seconds);
        log(`run ${i + 1}: ours ${Math.round(ours[i]!)} items/s, baseline ${Math.round(raw[i]!)}`);
      }
      // The floor under any latency aim: one batch at a time, into files of the same size.
      loneStore = await baseline.lone('raw-lone', LONE_BATCHES);
      loneOurs = (await load(url, 'ours-lone', { batches: LONE_BATCHES, concurrency: 1 }))
        .latencies;
    } finally {
      await baseline.close();
    }
    const halfRate = median(ours) / ITEMS / 2;
    const countersBefore = await storeCounters(launcher);
    const half = await load(url, 'half', { rate: halfRate });
    const halfStore = counted(countersBefore, await storeCounters(launcher));
    const rss = peakRssMb(launcher.pid);
    await launcher.stop('SIGINT');
    const searched = SEARCH_ITEMS > 0 ? await underSearches(dir, halfRate, true) : 'skipped';
    const notSearched = SEARCH_ITEMS > 0 ? await underSearches(dir, halfRate, false) : 'skipped';
    const result = {
      bench: 'embedded',
      batches: BATCHES,
      items_per_batch: ITEMS,
      concurrency: CONCURRENCY,
      runs: RUNS,
      ours_items_per_s: Math.round(median(ours)),
      baseline_items_per_s: Math.round(median(raw)),
      ratio: Math.round((median(ours) / median(raw)) * 100) / 100,
      runs_items_per_s: { ours: ours.map(Math.round), baseline: raw.map(Math.round) },
      half_load_batches_per_s: Math.round(halfRate),
      post_add_ms: percentiles(half.latencies, [50, 99]),
      half_load_store: halfStore,
      lone_batch_ms: {
        post_add: percentiles(loneOurs, [50, 99]),
        store_alone: percentiles(loneStore, [50, 99]),
      },
      server_peak_rss_mb: rss,
      items_searched: SEARCH_ITEMS,
      search_q: bandWords('common', 1)[0],
      under_relevance_searches: searched,
      same_load_no_search: notSearched,
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

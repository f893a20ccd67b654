/**
 * bench:delete — what a privacy delete (POST /data/delete-range) costs the producers of other
 * devices, on a device with a long history, through `npm start`'s embedded process. Bounded:
 * BENCH_BATCHES batches per phase at BENCH_RATE batches/s (2 minutes at most a phase), traffic
 * only to 127.0.0.1. Prints one JSON line last.
 *
 * The device `big` holds BENCH_DELETE_ITEMS items (1M by default, one a second, as a capture
 * writes them), in a file built once and kept outside the repository (bench/search-dataset.ts's
 * cache folder); each run starts the server on a fresh copy. Per run, the same POST /add load
 * for another device runs alone, then beside back-to-back deletes of 40,000 items of `big` (a
 * long delete-range, in the worker's chunks), then beside back-to-back deletes of 60 (a minute of
 * its capture, as in the issue that found one delete freezing ingest for 12 s): the aim is POST
 * /add p99 during a delete within 2x of alone. Then single deletes of growing sizes show what a
 * delete costs per item (it must not grow with the device's history).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddRequest } from '@screenfleet/contracts';
import { toDocuments } from '@screenfleet/ingest-worker';
import { createSqliteContentStore, openSqliteDatabase } from '@screenfleet/storage';
import { LAYOUT_VERSION } from '../libs/storage/src/sqlite.content-schema';
import { buildBatch, buildItem } from '../test/support/content';
import { startLauncher } from '../test/support/system';
import { runIngestLoad } from './load-runner';
import { datasetDir } from './search-dataset';
import { median, percentiles } from './stats';

const DEVICE_ITEMS = Number(process.env.BENCH_DELETE_ITEMS ?? 1_000_000);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 200);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 45);
const RATE = Number(process.env.BENCH_RATE ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** A large delete (half a day of the big device's capture, ~80 writer chunks of 500). */
const LARGE_DELETE = 40_000;
/** A small one: a minute of its capture, as in the issue that found deletes freezing ingest. */
const SMALL_DELETE = 60;
/** The single deletes after the load, to see the cost per item. */
const SIZES = [60, 600, 6_000, 60_000];
const TOKEN = 'bench-token-0123456789abcdef';
const TOKENS = JSON.stringify([
  { id: 'bench', token: TOKEN, scopes: ['ingest', 'search', 'data:delete'] },
]);
/** buildItem's clock: item n of the big device is captured at FIRST_MS + n seconds. */
const FIRST_MS = Date.parse(buildItem(0).timestamp);

function log(message: string): void {
  process.stderr.write(`[bench:delete] ${message}\n`);
}

/** The big device's file, built once (about 1-2 minutes for 1M items here). */
async function bigDeviceFile(): Promise<string> {
  const dir = datasetDir();
  const file = path.join(dir, `delete-${DEVICE_ITEMS}-layout${LAYOUT_VERSION}.db`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const building = `${file}.building-${process.pid}`;
  log(`building ${file} (${DEVICE_ITEMS} items of one device, once)`);
  const started = performance.now();
  const database = await openSqliteDatabase(building);
  try {
    const store = createSqliteContentStore({ database });
    await store.ensureIndexes();
    const receivedAt = new Date(FIRST_MS).toISOString();
    for (let first = 0; first < DEVICE_ITEMS; first += 1000) {
      const request = buildBatch('big', first, Math.min(1000, DEVICE_ITEMS - first));
      await store.insertItems(
        toDocuments({ received_at: receivedAt, request: request as AddRequest }),
      );
      if (first % 100_000 === 0 && first > 0) log(`  ${first} items`);
    }
    await database.close();
    renameSync(building, file);
    log(`built in ${Math.round((performance.now() - started) / 1000)} s`);
    return file;
  } catch (error) {
    await database.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${building}${suffix}`, { force: true });
    throw error;
  }
}

async function post(url: string, route: string, body: unknown): Promise<Response> {
  return fetch(`${url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
}

/** Deletes `items` seconds of the big device's capture from item `first` on; its time (ms). */
async function deleteSeconds(url: string, first: number, items: number): Promise<number> {
  const started = performance.now();
  const response = await post(url, '/data/delete-range', {
    device_name: 'big',
    start_time: new Date(FIRST_MS + first * 1000).toISOString(),
    end_time: new Date(FIRST_MS + (first + items) * 1000).toISOString(),
  });
  const body = (await response.json()) as { items_deleted?: number };
  if (response.status !== 200 || body.items_deleted !== items) {
    throw new Error(`delete of ${items} items answered ${response.status} ${JSON.stringify(body)}`);
  }
  return performance.now() - started;
}

const load = (url: string, device: string) =>
  runIngestLoad({
    url,
    token: TOKEN,
    device,
    batches: BATCHES,
    items: ITEMS,
    concurrency: 4,
    rate: RATE,
  });

/**
 * The load for another device, while deletes of `size` items of the big device's oldest capture
 * run back to back (none: alone); every delete's time.
 */
async function loadBeside(url: string, device: string, size: number, cursor: { next: number }) {
  let done = false;
  const deletes: number[] = [];
  const deleting = (async () => {
    while (!done && size > 0) {
      deletes.push(await deleteSeconds(url, cursor.next, size));
      cursor.next += size;
    }
  })();
  const added = await load(url, device).finally(() => (done = true));
  await deleting;
  return { latencies: added.latencies, deletes };
}

async function run(dir: string, source: string, index: number) {
  const dataDir = path.join(dir, `run-${index}`);
  mkdirSync(dataDir, { mode: 0o700 });
  copyFileSync(source, path.join(dataDir, 'screenfleet.db'));
  const launcher = startLauncher({
    DATA_DIR: dataDir,
    GATEWAY_PORT: '0',
    GATEWAY_OPS_PORT: '0',
    GATEWAY_TOKENS: TOKENS,
    LOG_LEVEL: 'warn',
  });
  try {
    const url = `http://127.0.0.1:${await launcher.apiPort}`;
    await runIngestLoad({
      url,
      token: TOKEN,
      device: 'warm-up',
      batches: 50,
      items: ITEMS,
      concurrency: 4,
      rate: RATE,
    });
    const cursor = { next: 0 };
    await deleteSeconds(url, cursor.next, SMALL_DELETE);
    cursor.next += SMALL_DELETE;
    const alone = await loadBeside(url, `alone-${index}`, 0, cursor);
    const large = await loadBeside(url, `large-${index}`, LARGE_DELETE, cursor);
    const small = await loadBeside(url, `small-${index}`, SMALL_DELETE, cursor);
    const sizes: Array<{ items: number; ms: number }> = [];
    for (const items of SIZES) {
      sizes.push({ items, ms: await deleteSeconds(url, cursor.next, items) });
      cursor.next += items;
    }
    return { alone, large, small, sizes };
  } finally {
    await launcher.stop('SIGINT');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

type P = { p50: number; p99: number };
const p50p99 = (samples: number[]): P => {
  const { p50, p99 } = percentiles(samples, [50, 99]);
  return { p50: p50!, p99: p99! };
};

async function main(): Promise<void> {
  const source = await bigDeviceFile();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-bench-delete-'));
  try {
    const phase = (p: { latencies: number[]; deletes: number[] }) => ({
      ...p50p99(p.latencies),
      deletes: p.deletes.length,
    });
    const summary = (result: Awaited<ReturnType<typeof run>>) => ({
      alone: phase(result.alone),
      large: phase(result.large),
      small: phase(result.small),
      large_delete_ms: p50p99(result.large.deletes),
      small_delete_ms: p50p99(result.small.deletes),
      sizes: result.sizes,
    });
    const runs: Array<ReturnType<typeof summary>> = [];
    for (let i = 0; i < RUNS; i++) {
      runs.push(summary(await run(dir, source, i)));
      log(`run ${i + 1}: ${JSON.stringify(runs[i])}`);
    }
    const ratio = (pick: (r: (typeof runs)[number]) => { p99: number }) =>
      runs.map((r) => Math.round((pick(r).p99 / r.alone.p99) * 100) / 100);
    const output = {
      bench: 'delete',
      device_items: DEVICE_ITEMS,
      runs: RUNS,
      load: { batches: BATCHES, items_per_batch: ITEMS, batches_per_s: RATE },
      post_add_p99_ms: {
        alone: median(runs.map((r) => r.alone.p99)),
        beside_large_deletes: median(runs.map((r) => r.large.p99)),
        beside_small_deletes: median(runs.map((r) => r.small.p99)),
      },
      p99_ratio_beside_large_deletes: median(ratio((r) => r.large)),
      p99_ratio_beside_small_deletes: median(ratio((r) => r.small)),
      runs_p99_ratio: { large: ratio((r) => r.large), small: ratio((r) => r.small) },
      runs_detail: runs.map(({ sizes: _sizes, ...r }) => r),
      delete_ms_by_size: SIZES.map((items, i) => {
        const ms = median(runs.map((r) => r.sizes[i]!.ms));
        return { items, ms: Math.round(ms), us_per_item: Math.round((ms * 1000) / items) };
      }),
    };
    process.stdout.write(`${JSON.stringify(output)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

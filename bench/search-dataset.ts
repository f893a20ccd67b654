/**
 * The search benchmarks' big SQLite file, built once and kept outside the repository
 * (~/.cache/screenfleet/bench, or $XDG_CACHE_HOME): BENCH_SEARCH_ITEMS items of
 * bench/search-data.ts in time order (a capture's stream), through the content store as the
 * server writes them (1,000 per insert). Its name carries the store's layout version, so a new
 * layout builds a new file. Building 1M items takes a few minutes here and is bounded
 * (BENCH_SEARCH_BUILD_MAX_S, 1200 s); a build that runs out of time or fails leaves nothing.
 * The data's "now" is a fixed instant, so a file built on another day answers the same queries.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSqliteContentStore, openSqliteDatabase } from '@screenfleet/storage';
import { LAYOUT_VERSION } from '../libs/storage/src/sqlite.content-schema';
import { searchDocuments } from './search-data';

/** The data's "now": the newest item is just before it. */
export const DATASET_NOW = Date.UTC(2026, 9, 1);
/** Bumped when search-data.ts makes other documents. */
const DATA_VERSION = 1;
const BUILD_MAX_S = Number(process.env.BENCH_SEARCH_BUILD_MAX_S ?? 1200);
const CHUNK = 1000;

export function datasetDir(): string {
  const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  return path.join(cache, 'screenfleet', 'bench');
}

/** The file holding `items` items, built now when missing. */
export async function searchDataset(items: number, log: (m: string) => void): Promise<string> {
  const dir = datasetDir();
  const file = path.join(dir, `search-${items}-layout${LAYOUT_VERSION}-data${DATA_VERSION}.db`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const building = `${file}.building-${process.pid}`;
  const remove = (base: string) => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${base}${suffix}`, { force: true });
  };
  const deadline = performance.now() + BUILD_MAX_S * 1000;
  const started = performance.now();
  log(`building ${file} (${items} items, once)`);
  const database = await openSqliteDatabase(building);
  try {
    const store = createSqliteContentStore({ database });
    await store.ensureIndexes();
    // A few inserts in flight: the next documents are made while the writer thread writes.
    const inFlight = new Set<Promise<unknown>>();
    for (let first = 0; first < items; first += CHUNK) {
      if (performance.now() > deadline) {
        throw new Error(
          `building the dataset took over ${BUILD_MAX_S} s (BENCH_SEARCH_BUILD_MAX_S)`,
        );
      }
      const insert = store.insertItems(
        searchDocuments(first, Math.min(CHUNK, items - first), DATASET_NOW, items),
      );
      inFlight.add(insert);
      void insert.finally(() => inFlight.delete(insert)).catch(() => undefined);
      if (inFlight.size >= 4) await Promise.race(inFlight);
      if (first % 100_000 === 0 && first > 0) log(`  ${first} items`);
    }
    await Promise.all(inFlight);
    // Everything into the file itself, so that it is whole without its WAL (which keeps the
    // building name, and is removed).
    const copy = await database.writer.copyWal();
    if (copy.busy || copy.copied !== copy.pages) throw new Error('the WAL could not be copied');
    await database.close();
    renameSync(building, file);
    remove(building); // its WAL and shm only, now: the file has its new name
    log(`built in ${Math.round((performance.now() - started) / 1000)} s`);
    return file;
  } catch (error) {
    await database.close();
    remove(building);
    throw error;
  }
}

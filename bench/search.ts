/**
 * bench:search — GET /search latency over HTTP beside the same query run directly on the store,
 * in both modes, and the ingest cost of the search index. Bounded in requests and time; traffic
 * only to 127.0.0.1; temp directories, the vhost and FerretDB removed at the end. Progress on
 * stderr, one JSON line last on stdout.
 *
 * Queries: one word and two words, of common, medium and rare words (bench/search-data.ts), with
 * a time filter (the last 24 h of 7 days of data), newest first, limit 20: screenpipe's default.
 * Requests go one at a time; each kind cycles through a few words. The store baseline is
 * ContentStore.search with the SearchQuery the gateway makes of the same parameters, so the
 * ratio is what HTTP, the bus and the answer's mapping add.
 *
 * Embedded: BENCH_SEARCH_ITEMS (1M) items in a SQLite file built once and cached
 * (bench/search-dataset.ts), then `npm start`'s launcher (bin/start.ts, its own process) started
 * on it.
 * Distributed: gateway and ingest worker (their built main.js) on a vhost of the local RabbitMQ
 * and a FerretDB of this run. FerretDB v1 scans the whole collection for every search (the
 * indexes do not help it), so it gets BENCH_SEARCH_DISTRIBUTED_ITEMS (2,000) items and a few
 * samples; BENCH_SEARCH_DISTRIBUTED=0 skips it.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { searchTerms } from '@screenfleet/contracts';
import {
  createMongoContentStore,
  createSqliteContentStore,
  openSqliteDatabase,
  type ContentDocument,
  type ContentStore,
  type SearchQuery,
} from '@screenfleet/storage';
import {
  searchFilter,
  searchSort,
  type StoredItem,
} from '../libs/storage/src/mongo.content-search';
import { startLauncher } from '../test/support/system';
import { bandWords, searchDocuments, type Band } from './search-data';
import { DATASET_NOW, searchDataset } from './search-dataset';
import { embeddedIngest } from './search-ingest';
import { startDistributedStack } from './distributed-stack';
import { median, percentiles } from './stats';

const ITEMS = Number(process.env.BENCH_SEARCH_ITEMS ?? 1_000_000);
const SAMPLES = Number(process.env.BENCH_SEARCH_SAMPLES ?? 60);
const INGEST_ITEMS = Number(process.env.BENCH_SEARCH_INGEST_ITEMS ?? 10_000);
const DISTRIBUTED = process.env.BENCH_SEARCH_DISTRIBUTED !== '0';
const DISTRIBUTED_ITEMS = Number(process.env.BENCH_SEARCH_DISTRIBUTED_ITEMS ?? 2000);
const DISTRIBUTED_SAMPLES = Number(process.env.BENCH_SEARCH_DISTRIBUTED_SAMPLES ?? 3);
/** Distributed searches stop being sampled after this many seconds (each takes seconds). */
const DISTRIBUTED_BUDGET_S = Number(process.env.BENCH_SEARCH_DISTRIBUTED_BUDGET_S ?? 100);
const TOKEN = 'bench-token-0123456789abcdef';
const TOKENS = JSON.stringify([{ id: 'bench', token: TOKEN, scopes: ['search', 'ingest'] }]);
const WORDS_PER_KIND = 5;
const LIMIT = 20;
const HOUR_MS = 3_600_000;

function log(message: string): void {
  process.stderr.write(`[bench:search] ${message}\n`);
}

interface QueryKind {
  name: string;
  /** The q of each sample, cycled. */
  qs: string[];
}

/** Single words and pairs of each frequency band: common, medium, rare. */
function queryKinds(bands: Band[]): QueryKind[] {
  return bands.flatMap((band) => {
    const words = bandWords(band, WORDS_PER_KIND + 1);
    return [
      { name: `one_word_${band}`, qs: words.slice(0, WORDS_PER_KIND) },
      {
        name: `two_words_${band}`,
        qs: words.slice(0, WORDS_PER_KIND).map((word, i) => `${word} ${words[i + 1]}`),
      },
    ];
  });
}

/** The last 24 h of the data, as both paths get it. */
function timeFilter(now: number) {
  return { from: new Date(now - 24 * HOUR_MS), to: new Date(now) };
}

/** What the gateway asks the store for `q` (parseSearchQuery + toSearchRequest, no devices). */
function storeQuery(q: string, range: { from: Date; to: Date }): SearchQuery {
  return {
    terms: searchTerms(q),
    contentTypes: ['frames', 'transcription'],
    ...range,
    order: 'newest',
    limit: LIMIT,
    offset: 0,
  };
}

function searchUrl(base: string, q: string, range: { from: Date; to: Date }): string {
  const params = new URLSearchParams({
    q,
    limit: String(LIMIT),
    start_time: range.from.toISOString(),
    end_time: range.to.toISOString(),
  });
  return `${base}/search?${params.toString()}`;
}

async function httpSearch(url: string): Promise<number> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  const body = (await response.json()) as { pagination?: { total: number } };
  if (response.status !== 200)
    throw new Error(`GET /search ${response.status}: ${JSON.stringify(body)}`);
  return body.pagination?.total ?? NaN;
}

interface KindFigures {
  http_ms: Record<string, number>;
  store_ms: Record<string, number>;
  /** http p50 / store p50: what HTTP, the bus and the mapping add. */
  ratio_p50: number;
  /** Median matches (the answer's total) of the kind's queries. */
  median_total: number;
  samples: number;
}

/**
 * Each kind's samples, HTTP and store alternating query by query (so load on the shared machine
 * hits both alike); the first query of each kind once unmeasured on each path, to warm caches.
 */
async function measureKinds(
  kinds: QueryKind[],
  samples: number,
  http: (q: string) => Promise<number>,
  store: (q: string) => Promise<number>,
  deadline = Number.POSITIVE_INFINITY,
): Promise<Record<string, KindFigures>> {
  const figures: Record<string, KindFigures> = {};
  for (const kind of kinds) {
    await http(kind.qs[0]!);
    await store(kind.qs[0]!);
    const httpMs: number[] = [];
    const storeMs: number[] = [];
    const totals: number[] = [];
    for (let i = 0; i < samples && performance.now() < deadline; i++) {
      const q = kind.qs[i % kind.qs.length]!;
      let started = performance.now();
      totals.push(await http(q));
      httpMs.push(performance.now() - started);
      started = performance.now();
      const storeTotal = await store(q);
      storeMs.push(performance.now() - started);
      if (storeTotal !== totals[totals.length - 1]) {
        throw new Error(`${kind.name} "${q}": HTTP total ${totals.at(-1)}, store ${storeTotal}`);
      }
    }
    const http50 = percentiles(httpMs, [50, 95]);
    const store50 = percentiles(storeMs, [50, 95]);
    figures[kind.name] = {
      http_ms: http50,
      store_ms: store50,
      ratio_p50: Math.round(((http50.p50 ?? NaN) / (store50.p50 ?? NaN)) * 100) / 100,
      median_total: median(totals),
      samples: httpMs.length,
    };
    log(`${kind.name}: ${JSON.stringify(figures[kind.name])}`);
  }
  return figures;
}

/** Inserts `count` generated items in batches of 100 (loading, not measured). */
async function load(store: ContentStore, count: number, now: number): Promise<void> {
  for (let first = 0; first < count; first += 100) {
    await store.insertItems(searchDocuments(first, Math.min(100, count - first), now));
    if (first % 20_000 === 0 && first > 0) log(`loaded ${first} items`);
  }
}

/** As a capture sends them: ingest is measured on items that arrive in time order. */
const inTimeOrder = (docs: ContentDocument[]) =>
  docs.sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime());

const round1 = (value: number) => Math.round(value * 10) / 10;
const indexCostPercent = (on: number, off: number) => round1((1 - on / off) * 100);

async function embedded(dir: string) {
  const now = DATASET_NOW;
  const dataset = await searchDataset(ITEMS, log);
  // The launcher's file is the cached one (searches only read; the archive worker, off by
  // default, writes its state row).
  mkdirSync(path.join(dir, 'data'), { mode: 0o700 });
  symlinkSync(dataset, path.join(dir, 'data', 'screenfleet.db'));
  const database = await openSqliteDatabase(dataset);
  const store = createSqliteContentStore({ database });
  const launcher = startLauncher({
    DATA_DIR: path.join(dir, 'data'),
    GATEWAY_PORT: '0',
    GATEWAY_OPS_PORT: '0',
    GATEWAY_TOKENS: TOKENS,
    LOG_LEVEL: 'warn',
  });
  try {
    const base = `http://127.0.0.1:${await launcher.apiPort}`;
    const range = timeFilter(now);
    const started = performance.now();
    const queries = await measureKinds(
      queryKinds(['common', 'medium', 'rare']),
      SAMPLES,
      (q) => httpSearch(searchUrl(base, q, range)),
      async (q) => (await store.search(storeQuery(q, range))).total,
    );
    log(`embedded: searches took ${round1((performance.now() - started) / 1000)} s`);
    const ingest = await embeddedIngest(
      dir,
      inTimeOrder(searchDocuments(ITEMS, INGEST_ITEMS, now)),
      log,
    );
    return { items: ITEMS, queries, ingest };
  } finally {
    await launcher.stop('SIGINT');
    await store.close();
    await database.close();
  }
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await work();
  return { ms: round1(performance.now() - started), result };
}

/**
 * Where a FerretDB search's time goes, on one query: its total (countDocuments) and its page
 * (find + sort + limit) apart, and the same page without the words filter (only type and time),
 * and a plain read of every document: each reads the whole collection, so they cost alike.
 */
async function ferretBreakdown(client: MongoClient, database: string, q: string, now: number) {
  const items = client.db(database).collection<StoredItem>('content_items');
  const query = storeQuery(q, timeFilter(now));
  const filter = searchFilter(query);
  const { terms: _terms, ...withoutWords } = query;
  const count = await timed(() => items.countDocuments(filter));
  const page = await timed(() => items.find(filter).sort(searchSort(query)).limit(LIMIT).toArray());
  const pageWithoutWords = await timed(() =>
    items
      .find(searchFilter({ ...withoutWords, terms: [] }))
      .sort(searchSort(query))
      .limit(LIMIT)
      .toArray(),
  );
  const everything = await timed(() => items.find({}).toArray());
  return {
    q,
    count_ms: count.ms,
    page_ms: page.ms,
    page_without_words_ms: pageWithoutWords.ms,
    read_all_documents_ms: everything.ms,
    documents: everything.result.length,
  };
}

/** The same documents into FerretDB: the adapter (search terms on) vs raw insertMany (off). */
async function ferretIngest(client: MongoClient, url: string, docs: ContentDocument[]) {
  const on: number[] = [];
  const off: number[] = [];
  for (let round = 0; round < 2; round++) {
    const database = `bench_search_ingest_${round}`;
    const store = createMongoContentStore({ url, database: `${database}_on` });
    await store.ensureIndexes();
    // The baseline's collection gets the store's own indexes (ensureIndexes), so the only
    // difference is the search fields each document carries and the adapter's work for them.
    const plain = createMongoContentStore({ url, database: `${database}_off` });
    await plain.ensureIndexes();
    await plain.close();
    const raw = client.db(`${database}_off`).collection<ContentDocument>('content_items');
    let started = performance.now();
    for (let i = 0; i < docs.length; i += 100) {
      await raw.insertMany(
        docs.slice(i, i + 100).map((doc) => ({ ...doc })),
        { ordered: false },
      );
    }
    off.push(docs.length / ((performance.now() - started) / 1000));
    started = performance.now();
    for (let i = 0; i < docs.length; i += 100) await store.insertItems(docs.slice(i, i + 100));
    on.push(docs.length / ((performance.now() - started) / 1000));
    await store.close();
    await client.db(`${database}_on`).dropDatabase();
    await client.db(`${database}_off`).dropDatabase();
  }
  const onRate = median(on);
  const offRate = median(off);
  return {
    items: docs.length,
    on_items_per_s: Math.round(onRate),
    off_items_per_s: Math.round(offRate),
    index_cost_percent: indexCostPercent(onRate, offRate),
  };
}

async function distributed(dir: string, now: number) {
  const stack = await startDistributedStack('search', dir, 'bench_search');
  const { store, database } = stack;
  const client = await MongoClient.connect(stack.ferretUrl);
  try {
    let started = performance.now();
    await load(store, DISTRIBUTED_ITEMS, now);
    log(
      `distributed: ${DISTRIBUTED_ITEMS} items loaded in ${round1((performance.now() - started) / 1000)} s`,
    );
    const base = await stack.serve({
      GATEWAY_TOKENS: TOKENS,
      // FerretDB's searches take seconds here: give them time rather than a 503.
      GATEWAY_SEARCH_TIMEOUT: '120s',
    });
    const range = timeFilter(now);
    started = performance.now();
    const queries = await measureKinds(
      queryKinds(['common', 'rare']),
      DISTRIBUTED_SAMPLES,
      (q) => httpSearch(searchUrl(base, q, range)),
      async (q) => (await store.search(storeQuery(q, range))).total,
      started + DISTRIBUTED_BUDGET_S * 1000,
    );
    log(`distributed: searches took ${round1((performance.now() - started) / 1000)} s`);
    const [word] = bandWords('medium', 1);
    const whereTimeGoes = await ferretBreakdown(client, database, word!, now);
    log(`distributed: where the time goes ${JSON.stringify(whereTimeGoes)}`);
    const ingest = await ferretIngest(
      client,
      stack.ferretUrl,
      inTimeOrder(searchDocuments(DISTRIBUTED_ITEMS, DISTRIBUTED_ITEMS, now)),
    );
    log(`distributed: ingest ${JSON.stringify(ingest)}`);
    return { items: DISTRIBUTED_ITEMS, queries, where_time_goes: whereTimeGoes, ingest };
  } finally {
    await client.close();
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-bench-search-'));
  const now = Date.now();
  try {
    const embeddedFigures = await embedded(dir);
    const distributedFigures = DISTRIBUTED ? await distributed(dir, now) : 'skipped';
    const worstP95 = Math.max(
      ...Object.values(embeddedFigures.queries).map((kind) => kind.http_ms.p95 ?? NaN),
    );
    const result = {
      bench: 'search',
      limit: LIMIT,
      time_filter: 'last 24 h of 7 days',
      embedded: embeddedFigures,
      distributed: distributedFigures,
      aims: {
        embedded_p95_ms_at_1m: {
          aim: 50,
          worst_p95_ms: worstP95,
          items: ITEMS,
          met: ITEMS >= 1_000_000 && worstP95 <= 50,
        },
        embedded_index_cost_percent: {
          aim: 40,
          value: embeddedFigures.ingest.store.index_cost_percent,
          met: embeddedFigures.ingest.store.index_cost_percent <= 40,
        },
      },
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * Whether the search index could be FTS5 `detail=column` rather than the default `detail=full`
 * (the search asks for no phrases, so positions are never needed), measured on bench:search's
 * 1M-item file (bench/search-dataset.ts; build it first, this probe never does) and on fresh
 * files:
 * 1. index size: a copy of the file (in a temp dir) gets a second FTS5 table, the production one's
 *    definition plus `detail = column`, filled from the item table's documents as production
 *    fills its own (contentRow); both sizes from dbstat, as built and after FTS5's 'optimize'
 *    (PROBE_OPTIMIZE=0 skips it), which gives both one segment so the timings compare the
 *    detail level, not how each was merged;
 * 2. ranking: bench:search's words (bandWords, 6 of each band: each of the first 5 alone and
 *    each with the next, 30 queries), relevance order, over all 1M items: the top 10 of the words
 *    match (`ORDER BY rank, rowid DESC LIMIT 10`) and of production's searchSql (limit 10),
 *    compared table against table;
 * 3. latency: production's searchSql, relevance, limit 20, the last 24 h before DATASET_NOW
 *    (bench:search's query), PROBE_SAMPLES rounds of the 30 queries, the tables alternated;
 *    p50/p95 per band and per one/two words;
 * 4. ingest: PROBE_INGEST_ITEMS (20,000) documents' search rows (searchDocuments, in time order,
 *    production's seqs) into a fresh file holding only one FTS5 table of each kind, 100 and
 *    1,000 rows a transaction, WAL and synchronous=FULL; microseconds an item, medians of
 *    PROBE_INGEST_RUNS (5) runs, the kinds alternated.
 * Bounded: sampling stops at PROBE_MAX_S (2400 s) from the start. The copies are removed at the
 * end. Progress on stderr, one JSON line on stdout. Run from the repository's root:
 * npx tsx --tsconfig tsconfig.check.json libs/storage/test/fts-detail.probe.ts
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { searchTerms } from '@screenfleet/contracts';
import type Database from 'libsql';
import { bandWords, searchDocuments, type Band } from '../../../bench/search-data';
import { DATASET_NOW, datasetDir } from '../../../bench/search-dataset';
import { median, percentiles } from '../../../bench/stats';
import type { ContentDocument, SearchQuery } from '../src/content-store';
import { openSqliteConnection, statementCache } from '../src/sqlite-connection';
import { fromJson } from '../src/sqlite-json';
import {
  contentRow,
  contentTables,
  LAYOUT_VERSION,
  SLOTS_PER_MS,
  type ContentTables,
} from '../src/sqlite.content-schema';
import { searchSql } from '../src/sqlite.content-search';

const ITEMS = Number(process.env.PROBE_ITEMS ?? 1_000_000);
const FILE =
  process.env.PROBE_FILE ??
  path.join(datasetDir(), `search-${ITEMS}-layout${LAYOUT_VERSION}-data1.db`);
const SAMPLES = Number(process.env.PROBE_SAMPLES ?? 8);
const INGEST_ITEMS = Number(process.env.PROBE_INGEST_ITEMS ?? 20_000);
const INGEST_RUNS = Number(process.env.PROBE_INGEST_RUNS ?? 5);
const OPTIMIZE = process.env.PROBE_OPTIMIZE !== '0';
const MAX_S = Number(process.env.PROBE_MAX_S ?? 2400);
const BANDS: Band[] = ['common', 'medium', 'rare'];
const HOUR_MS = 3_600_000;
const FILL_CHUNK = 1000;
const FILL_TRANSACTION = 10_000;

const started = performance.now();
const deadline = started + MAX_S * 1000;
const log = (message: string) =>
  process.stderr.write(
    `[fts-detail ${Math.round((performance.now() - started) / 1000)} s] ${message}\n`,
  );
const round1 = (value: number) => Math.round(value * 10) / 10;
const quoted = (token: string) => `"${token.replace(/"/g, '""')}"`;

type Kind = 'full' | 'column';

interface Query {
  band: Band;
  words: 1 | 2;
  q: string;
}

/** bench:search's queries: per band, each of the first 5 words alone and with the next. */
function queries(): Query[] {
  return BANDS.flatMap((band) => {
    const words = bandWords(band, 6);
    return [
      ...words.slice(0, 5).map((q) => ({ band, words: 1 as const, q })),
      ...words.slice(0, 5).map((w, i) => ({ band, words: 2 as const, q: `${w} ${words[i + 1]}` })),
    ];
  });
}

/**
 * The production index's definition (as the file stores it) under another name, with
 * `detail = column` added when asked: the same columns and options by construction.
 */
function indexDdl(productionSql: string, productionName: string, name: string, kind: Kind) {
  const renamed = productionSql.replace(productionName, name);
  if (renamed === productionSql) throw new Error(`no ${productionName} in ${productionSql}`);
  return kind === 'full' ? renamed : renamed.replace(/\)\s*$/, ', detail = column)');
}

/** An FTS5 table's shadow tables' bytes and pages (dbstat, one row per b-tree). */
function indexSize(db: Database.Database, table: string) {
  const name = table.replace(/"/g, '');
  const size = db.prepare(
    `SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat WHERE name = ? AND aggregate = TRUE`,
  );
  const parts: Record<string, number> = {};
  let bytes = 0;
  for (const shadow of ['data', 'idx', 'docsize', 'config']) {
    const row = size.get(`${name}_${shadow}`) as { bytes: number };
    parts[`${shadow}_mb`] = round1(row.bytes / 2 ** 20);
    bytes += row.bytes;
  }
  return { total_mb: round1(bytes / 2 ** 20), ...parts };
}

/** The second index, filled from the items' documents as production fills its own. */
function fillColumnIndex(db: Database.Database, tables: ContentTables, column: string): number {
  const read = db
    .prepare(`SELECT seq, document FROM ${tables.table} WHERE seq > ? ORDER BY seq LIMIT ?`)
    .safeIntegers(true);
  const insert = db.prepare(
    `INSERT INTO ${column} (rowid, words, device, type) VALUES (?, ?, ?, ?)`,
  );
  let after = -(2n ** 63n);
  let rows = 0;
  const begun = performance.now();
  db.exec('BEGIN');
  for (;;) {
    const chunk = read.all(after, FILL_CHUNK) as Array<{ seq: bigint; document: string }>;
    if (chunk.length === 0) break;
    for (const row of chunk) {
      insert.run(row.seq, ...contentRow(fromJson<ContentDocument>(row.document)).search);
    }
    rows += chunk.length;
    after = chunk[chunk.length - 1]!.seq;
    if (rows % FILL_TRANSACTION === 0) {
      db.exec('COMMIT');
      if (rows % 100_000 === 0) log(`  filled ${rows}`);
      db.exec('BEGIN');
    }
  }
  db.exec('COMMIT');
  log(`filled ${rows} rows in ${Math.round((performance.now() - begun) / 1000)} s`);
  return rows;
}

interface Top {
  keys: string[];
  ranks: number[];
}

/**
 * The words match alone, first 10 (relevance order, or newest first when `newest`): seqs (as
 * text) and BM25 ranks.
 */
function wordsTop(db: Database.Database, table: string, q: string, newest = false): Top {
  const match = `words : (${searchTerms(q).map(quoted).join(' AND ')})`;
  const rows = db
    .prepare(
      `SELECT rowid AS seq, rank FROM ${table} WHERE ${table} MATCH ?
       ORDER BY ${newest ? '' : 'rank, '}rowid DESC LIMIT 10`,
    )
    .safeIntegers(true)
    .all(match) as Array<{ seq: bigint; rank: number }>;
  return { keys: rows.map((row) => String(row.seq)), ranks: rows.map((row) => Number(row.rank)) };
}

function productionQuery(q: string, limit: number, range?: { from: Date; to: Date }): SearchQuery {
  return {
    terms: searchTerms(q),
    contentTypes: ['frames', 'transcription'],
    ...range,
    order: 'relevance',
    limit,
    offset: 0,
  };
}

/** Production's whole search statement on `tables`: its total and the page's ids. */
function productionSearch(
  sql: (text: string) => Database.Statement,
  tables: ContentTables,
  query: SearchQuery,
): { total: number; ids: string[] } {
  const statement = searchSql(tables, query);
  const row = sql(statement.text).get(...statement.params) as { total: number; page: string };
  return {
    total: row.total,
    ids: (JSON.parse(row.page) as Array<{ _id: string }>).map((doc) => doc._id),
  };
}

/** How two top-10 lists differ. */
function compare(full: string[], column: string[], fullRanks?: number[]) {
  if (full.join() === column.join()) return { identical: true as const };
  const shared = full.filter((key) => column.includes(key)).length;
  const firstDifferent = full.findIndex((key, i) => column[i] !== key);
  return {
    identical: false as const,
    /** Items in both lists, of how many each holds (fewer than 10 when fewer match). */
    shared,
    found: [full.length, column.length],
    how:
      shared === full.length && shared === column.length ? 'same items, reordered' : 'other items',
    first_different_position: firstDifferent + 1,
    ...(fullRanks ? { distinct_full_ranks: new Set(fullRanks).size } : {}),
  };
}

function rankingComparison(
  db: Database.Database,
  sql: (text: string) => Database.Statement,
  tables: Record<Kind, ContentTables>,
) {
  const perQuery: Array<Record<string, unknown>> = [];
  let wordsIdentical = 0;
  let productionIdentical = 0;
  let columnAllZero = 0;
  let columnNewestFirst = 0;
  for (const query of queries()) {
    const full = wordsTop(db, tables.full.search, query.q);
    const column = wordsTop(db, tables.column.search, query.q);
    const words = compare(full.keys, column.keys, full.ranks);
    const fullPage = productionSearch(sql, tables.full, productionQuery(query.q, 10));
    const columnPage = productionSearch(sql, tables.column, productionQuery(query.q, 10));
    const production = compare(fullPage.ids, columnPage.ids);
    if (words.identical) wordsIdentical++;
    if (production.identical) productionIdentical++;
    // Whether the column index's relevance order is newest first (every rank equal).
    const newestFirst =
      wordsTop(db, tables.column.search, query.q, true).keys.join() === column.keys.join();
    if (newestFirst) columnNewestFirst++;
    if (column.ranks.every((rank) => rank === 0)) columnAllZero++;
    perQuery.push({
      ...query,
      total: fullPage.total,
      same_total: fullPage.total === columnPage.total,
      words_match: words,
      production: production,
      // The BM25 values themselves: equal ranks leave the order to rowid (newest first).
      full_ranks: [full.ranks[0], full.ranks.at(-1)],
      column_ranks: [column.ranks[0], column.ranks.at(-1)],
      column_distinct_ranks_in_top10: new Set(column.ranks).size,
      column_top10_is_newest_first: newestFirst,
    });
    log(`ranking "${query.q}": words ${JSON.stringify(words)}, production ${production.identical}`);
  }
  return {
    queries: perQuery.length,
    words_match_identical: wordsIdentical,
    production_identical: productionIdentical,
    column_top10_ranks_all_zero: columnAllZero,
    column_top10_is_newest_first: columnNewestFirst,
    per_query: perQuery,
  };
}

/** bench:search's relevance query timed on both indexes, alternated, per band and word count. */
function latency(sql: (text: string) => Database.Statement, tables: Record<Kind, ContentTables>) {
  const range = { from: new Date(DATASET_NOW - 24 * HOUR_MS), to: new Date(DATASET_NOW) };
  const all = queries();
  const samples: Record<string, Record<Kind, number[]>> = {};
  const totals: Record<string, number[]> = {};
  const add = (key: string, kind: Kind, ms: number) => {
    samples[key] ??= { full: [], column: [] };
    samples[key][kind].push(ms);
  };
  for (const query of all) {
    for (const kind of ['full', 'column'] as const) {
      productionSearch(sql, tables[kind], productionQuery(query.q, 20, range)); // warm
    }
  }
  let rounds = 0;
  for (let round = 0; round < SAMPLES && performance.now() < deadline; round++, rounds++) {
    for (const query of all) {
      const order: Kind[] = round % 2 === 0 ? ['full', 'column'] : ['column', 'full'];
      const seen: Partial<Record<Kind, number>> = {};
      for (const kind of order) {
        const begun = performance.now();
        seen[kind] = productionSearch(sql, tables[kind], productionQuery(query.q, 20, range)).total;
        const ms = performance.now() - begun;
        add(query.band, kind, ms);
        add(
          `${query.band}_${query.words === 1 ? 'one' : 'two'}_word${query.words === 1 ? '' : 's'}`,
          kind,
          ms,
        );
      }
      if (seen.full !== seen.column) {
        throw new Error(`"${query.q}": total ${seen.full} (full) vs ${seen.column} (column)`);
      }
      if (round === 0) (totals[query.band] ??= []).push(seen.full!);
    }
    log(`latency round ${round + 1}/${SAMPLES}`);
  }
  const figures: Record<string, unknown> = {};
  for (const [key, byKind] of Object.entries(samples)) {
    figures[key] = {
      full_ms: percentiles(byKind.full, [50, 95]),
      column_ms: percentiles(byKind.column, [50, 95]),
      samples: byKind.full.length,
    };
  }
  const medianTotals = Object.fromEntries(
    Object.entries(totals).map(([band, values]) => [band, median(values)]),
  );
  return { rounds, limit: 20, time_filter: 'last 24 h', median_total: medianTotals, ...figures };
}

/** Production's seqs for documents in time order: the next place in each millisecond. */
function seqsOf(docs: ContentDocument[]): bigint[] {
  const next = new Map<number, bigint>();
  return docs.map((doc) => {
    const ms = doc.timestamp.getTime();
    const seq = next.get(ms) ?? BigInt(ms) * BigInt(SLOTS_PER_MS);
    next.set(ms, seq + 1n);
    return seq;
  });
}

function ingest(dir: string, ddl: Record<Kind, string>) {
  const docs = searchDocuments(0, INGEST_ITEMS, DATASET_NOW, INGEST_ITEMS).sort(
    (a, b) => a.timestamp.getTime() - b.timestamp.getTime(),
  );
  const rows = docs.map((doc) => contentRow(doc).search);
  const seqs = seqsOf(docs);
  const us: Record<string, number[]> = {};
  const bytes: Record<string, number> = {};
  let runs = 0;
  for (let run = 0; run < INGEST_RUNS && performance.now() < deadline; run++, runs++) {
    for (const batch of [100, 1000]) {
      const kinds: Kind[] = run % 2 === 0 ? ['full', 'column'] : ['column', 'full'];
      for (const kind of kinds) {
        const file = path.join(dir, `ingest-${kind}-${batch}.db`);
        const db = openSqliteConnection(file);
        try {
          db.exec(ddl[kind]);
          const insert = db.prepare(
            `INSERT INTO ingest_search (rowid, words, device, type) VALUES (?, ?, ?, ?)`,
          );
          const begun = performance.now();
          for (let first = 0; first < rows.length; first += batch) {
            db.exec('BEGIN');
            for (let i = first; i < Math.min(first + batch, rows.length); i++) {
              insert.run(seqs[i]!, ...rows[i]!);
            }
            db.exec('COMMIT');
          }
          (us[`${kind}_${batch}`] ??= []).push(((performance.now() - begun) * 1000) / rows.length);
          db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
          bytes[`${kind}_${batch}`] = statSync(file).size;
        } finally {
          db.close();
          for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
        }
      }
    }
    log(`ingest run ${run + 1}/${INGEST_RUNS}`);
  }
  const figures: Record<string, unknown> = { items: rows.length, runs };
  for (const batch of [100, 1000]) {
    const full = median(us[`full_${batch}`] ?? []);
    const column = median(us[`column_${batch}`] ?? []);
    figures[`per_${batch}`] = {
      full_us_per_item: round1(full),
      column_us_per_item: round1(column),
      column_saves_percent: round1((1 - column / full) * 100),
      full_runs_us: (us[`full_${batch}`] ?? []).map(round1),
      column_runs_us: (us[`column_${batch}`] ?? []).map(round1),
      file_mb: {
        full: round1((bytes[`full_${batch}`] ?? NaN) / 2 ** 20),
        column: round1((bytes[`column_${batch}`] ?? NaN) / 2 ** 20),
      },
    };
  }
  return figures;
}

function main() {
  if (!existsSync(FILE)) {
    throw new Error(`${FILE} is missing: build it first (bench:search, BENCH_SEARCH_ITEMS)`);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-fts-detail-'));
  try {
    const copy = path.join(dir, 'search.db');
    log(`copying ${FILE} (${round1(statSync(FILE).size / 2 ** 20)} MB)`);
    copyFileSync(FILE, copy);
    if (existsSync(`${FILE}-wal`)) copyFileSync(`${FILE}-wal`, `${copy}-wal`);
    const db = openSqliteConnection(copy);
    try {
      const sql = statementCache(db);
      const full = contentTables('content_items');
      const column = { ...full, search: '"content_items_search_col"' };
      const productionSql = (
        db.prepare(`SELECT sql FROM sqlite_schema WHERE name = 'content_items_search'`).get() as {
          sql: string;
        }
      ).sql;
      db.exec(
        indexDdl(productionSql, 'content_items_search', 'content_items_search_col', 'column'),
      );
      const items = (db.prepare(`SELECT count(*) AS n FROM ${full.table}`).get() as { n: number })
        .n;
      log(`${items} items; filling the detail=column index`);
      const filled = fillColumnIndex(db, full, column.search);
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      const sizes: Record<string, unknown> = {
        as_built: { full: indexSize(db, full.search), column: indexSize(db, column.search) },
      };
      log(`sizes as built: ${JSON.stringify(sizes.as_built)}`);
      if (OPTIMIZE) {
        for (const table of [full.search, column.search]) {
          const begun = performance.now();
          db.exec(`INSERT INTO ${table} (${table}) VALUES ('optimize')`);
          db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
          log(`optimized ${table} in ${Math.round((performance.now() - begun) / 1000)} s`);
        }
        sizes.optimized = {
          full: indexSize(db, full.search),
          column: indexSize(db, column.search),
        };
        log(`sizes optimized: ${JSON.stringify(sizes.optimized)}`);
      }
      const tables = { full, column };
      const ranking = rankingComparison(db, sql, tables);
      const latencies = latency(sql, tables);
      const ddl = {
        full: indexDdl(productionSql, 'content_items_search', 'ingest_search', 'full'),
        column: indexDdl(productionSql, 'content_items_search', 'ingest_search', 'column'),
      };
      db.close();
      rmSync(copy, { force: true });
      rmSync(`${copy}-wal`, { force: true });
      rmSync(`${copy}-shm`, { force: true });
      const ingestFigures = ingest(dir, ddl);
      console.log(
        JSON.stringify({
          probe: 'fts-detail',
          items,
          filled,
          production_ddl: productionSql,
          index_size: sizes,
          ranking,
          latency: { optimized: OPTIMIZE, ...latencies },
          ingest: ingestFigures,
          seconds: Math.round((performance.now() - started) / 1000),
        }),
      );
    } finally {
      if (db.open) db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();

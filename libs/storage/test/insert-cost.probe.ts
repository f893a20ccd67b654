/**
 * Where a 100-item batch's transaction goes in the embedded writer (issue 41): bench:embedded's
 * documents inserted by the writer's own operation ('content.insert', in this thread, as the
 * writer thread runs it: its savepoint, its search rows at the top level, the commit and its
 * fsync) into files of PROBE_PREFILL items, one batch a transaction, with one part of the schema
 * taken away (or a setting changed) per variant; PROBE_ROUNDS rounds alternating the variants
 * (PROBE_VARIANTS: which), fresh files each; the WAL copied out of the timed transactions.
 * Prints ms a batch (p50, p90; the COMMIT's own p50) per variant, as one JSON line. Run from the repository's root:
 * npx tsx --tsconfig tsconfig.check.json libs/storage/test/insert-cost.probe.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Database from 'libsql';
import type { AddRequest } from '@screenfleet/contracts';
import { toDocuments } from '@screenfleet/ingest-worker';
import { openSqliteConnection } from '@screenfleet/storage';
import { percentiles } from '../../../bench/stats';
import { buildBatch } from '../../../test/support/content';
import { statementCache } from '../src/sqlite-connection';
import {
  writeOperations,
  writePendingSearchRows,
  type WriterConnection,
} from '../src/sqlite-writer.operations';

const PREFILL = Number(process.env.PROBE_PREFILL ?? 50_000);
const BATCHES = Number(process.env.PROBE_BATCHES ?? 200);
const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 3);
const ITEMS = 100;
const TABLE = 'content_items';

/** Each variant: what is taken away from the store's schema before the prefill. */
const variants: Record<string, string> = {
  store: '',
  no_file_path_index: `DROP INDEX "${TABLE}_file_path";`,
  no_device_timestamp_index: `DROP INDEX "${TABLE}_device_timestamp_id";`,
  no_timestamp_index: `DROP INDEX "${TABLE}_timestamp_id";`,
  no_secondary_indexes: `DROP INDEX "${TABLE}_file_path"; DROP INDEX "${TABLE}_device_timestamp_id";
    DROP INDEX "${TABLE}_timestamp_id";`,
  // A plain table in the index's place: the words still written, no inverted index.
  no_fts5: `DROP TABLE "${TABLE}_search"; CREATE TABLE "${TABLE}_search" (words, device, type);`,
  // The writer's page cache (SQLite's default: 2 MB) at 8 and 32 MB.
  cache_8mb: 'PRAGMA cache_size = -8192;',
  cache_32mb: 'PRAGMA cache_size = -32768;',
};
/** PROBE_VARIANTS: a comma-separated subset of the variants' names (default: all). */
const chosen = process.env.PROBE_VARIANTS?.split(',') ?? Object.keys(variants);

const receivedAt = new Date().toISOString();
const batch = (device: string, index: number) =>
  toDocuments({
    received_at: receivedAt,
    request: buildBatch(device, index * ITEMS, ITEMS) as AddRequest,
  });

/** Returns the commit's own ms (its fsync, mostly). */
function transaction(connection: WriterConnection, docs: ReturnType<typeof batch>): number {
  const { db } = connection;
  db.exec('BEGIN IMMEDIATE');
  db.exec('SAVEPOINT write');
  writeOperations['content.insert'](connection, { table: TABLE, docs });
  db.exec('RELEASE write');
  writePendingSearchRows(connection);
  const started = performance.now();
  db.exec('COMMIT');
  return performance.now() - started;
}

function run(file: string, change: string): { ms: number[]; commitMs: number[] } {
  const db: Database.Database = openSqliteConnection(file);
  try {
    db.pragma('wal_autocheckpoint = 0'); // the checkpoints are the probe's (below)
    const connection: WriterConnection = {
      db,
      sql: statementCache(db),
      bytes: 0,
      pendingSearchRows: [],
    };
    db.exec('BEGIN IMMEDIATE');
    writeOperations['content.schema'](connection, { table: TABLE });
    db.exec(change);
    db.exec('COMMIT');
    for (let i = 0; i < PREFILL / ITEMS; i += 10) {
      if (i % 200 === 0) db.pragma('wal_checkpoint(TRUNCATE)');
      const docs = Array.from({ length: 10 }, (_, j) => batch('prefill', i + j)).flat();
      transaction(connection, docs);
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
    const ms: number[] = [];
    const commitMs: number[] = [];
    for (let i = 0; i < BATCHES; i++) {
      // As the checkpointer does it beside the writer: out of the timed transactions.
      if (i % 20 === 0) db.pragma('wal_checkpoint(TRUNCATE)');
      const docs = batch('measured', i);
      const started = performance.now();
      commitMs.push(transaction(connection, docs));
      ms.push(performance.now() - started);
    }
    return { ms, commitMs };
  } finally {
    db.close();
  }
}

function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-insert-cost-'));
  const samples: Record<string, number[]> = {};
  const commits: Record<string, number[]> = {};
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, change] of Object.entries(variants).filter(([n]) => chosen.includes(n))) {
        const file = path.join(dir, `${name}-${round}.db`);
        const { ms, commitMs } = run(file, change);
        (samples[name] ??= []).push(...ms);
        (commits[name] ??= []).push(...commitMs);
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
        process.stderr.write(
          `round ${round + 1} ${name}: p50 ${percentiles(samples[name], [50]).p50} ms\n`,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const result = Object.fromEntries(
    Object.entries(samples).map(([name, ms]) => [
      name,
      { ...percentiles(ms, [50, 90]), commit_p50: percentiles(commits[name]!, [50]).p50 },
    ]),
  );
  process.stdout.write(
    `${JSON.stringify({ probe: 'insert-cost', prefill: PREFILL, batch_ms: result })}\n`,
  );
}

main();

import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StoreUnavailableError } from '@screenfleet/contracts';
import {
  createSqliteAuditStore,
  openSqliteConnection,
  openSqliteDatabase,
} from '@screenfleet/storage';
import { auditPageQuery } from '../src/sqlite.audit-schema';
import { buildAuditRow, describeAuditStoreContract } from './audit-store.contract';

// A real file in a temp directory, one per test, removed after it. Each store the contract opens
// has its own database on the file (its own writer thread: a second process, as far as SQLite
// can tell).
describeAuditStoreContract('sqlite (libsql)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-audit-'));
  const file = path.join(dir, 'screenfleet.db');
  return Promise.resolve({
    open: () => createSqliteAuditStore({ file }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  });
});

describe('sqlite audit store', () => {
  let dir: string;
  let file: string;
  const toClose: Array<{ close(): unknown }> = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-audit-'));
    file = path.join(dir, 'screenfleet.db');
  });

  afterEach(async () => {
    for (const closable of toClose.splice(0).reverse()) await closable.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('when the database is shared, then the table sits in its file beside the others, and close leaves it open', async () => {
    const database = await openSqliteDatabase(file);
    toClose.push(database);
    const store = createSqliteAuditStore({ database });
    const row = buildAuditRow();
    await store.insertRows([row]);
    await store.close();

    expect((await createSqliteAuditStore({ database }).query({ limit: 5 })).rows).toEqual([row]);
    const tables = await database.readers.query<{ names: string }>(
      "SELECT group_concat(name) AS names FROM sqlite_schema WHERE type = 'table'",
      [],
    );
    expect(tables[0]!.names.split(',')).toContain('audit');
  });

  it('when a page is asked with or without filters, then its statement walks an index from the cursor and sorts only the page', async () => {
    const store = createSqliteAuditStore({ file });
    toClose.push(store);
    await store.ensureSchema();
    const db = openSqliteConnection(file);
    toClose.push(db);
    const cursor = Buffer.from('[5,"x"]').toString('base64url');

    for (const [query, index] of [
      [{}, 'audit_at'],
      [{ cursor }, 'audit_at'],
      [{ device: 'office-1', cursor }, 'audit_device_at'],
      [{ actor: 'local', from: new Date(1), to: new Date(9) }, 'audit_actor_at'],
      [{ action: 'token.create' }, 'audit_action_at'],
    ] as const) {
      const { text, params } = auditPageQuery('audit', query, 11);
      const steps = (
        db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as Array<{ detail: string }>
      ).map((step) => step.detail);
      const read = steps.find((step) => / audit /.test(step));
      expect({ query, read }).toEqual({ query, read: expect.stringContaining(`INDEX ${index}`) });
      // The one sort is the aggregate's, over the rows of the page (LIMIT), never the table's.
      expect(steps.filter((step) => step.includes('TEMP B-TREE'))).toEqual([
        'USE TEMP B-TREE FOR json_group_array(ORDER BY)',
      ]);
    }
  });

  it('when another connection holds the write lock past the busy timeout, then writes reject StoreUnavailableError naming the store, reads go on, and writes work once it lets go', async () => {
    const database = await openSqliteDatabase(file, { busyTimeoutMs: 200 });
    toClose.push(database);
    const store = createSqliteAuditStore({ database });
    const stored = buildAuditRow();
    await store.insertRows([stored]);
    const holder = openSqliteConnection(file);
    toClose.push(holder);
    holder.exec('BEGIN IMMEDIATE');

    const row = buildAuditRow();
    for (const [operation, run] of [
      ['insertRows', () => store.insertRows([row])],
      ['deleteOlderThan', () => store.deleteOlderThan(new Date(8.64e15), { limit: 10 })],
    ] as const) {
      const error = await run().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(`audit store unavailable during ${operation}`);
    }
    expect((await store.query({ limit: 5 })).rows).toEqual([stored]);

    holder.exec('ROLLBACK');
    expect(await store.insertRows([row])).toEqual({ inserted: 1, alreadyStored: 0 });
  });
});

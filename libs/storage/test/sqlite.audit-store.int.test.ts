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

  it('when a page is asked with or without filters, then SQLite walks an index for it and sorts nothing', async () => {
    const store = createSqliteAuditStore({ file });
    toClose.push(store);
    await store.ensureSchema();
    const db = openSqliteConnection(file);
    toClose.push(db);
    const plan = (where: string) =>
      (
        db
          .prepare(
            `EXPLAIN QUERY PLAN SELECT id FROM audit ${where} ORDER BY at_ms DESC, id DESC LIMIT 11`,
          )
          .all() as Array<{ detail: string }>
      )
        .map((step) => step.detail)
        .join('; ');

    for (const [where, index] of [
      ['', 'audit_at'],
      ["WHERE (at_ms, id) < (5, 'x')", 'audit_at'],
      ["WHERE device = 'office-1' AND (at_ms, id) < (5, 'x')", 'audit_device_at'],
      ["WHERE actor = 'local' AND at_ms >= 1 AND at_ms < 9", 'audit_actor_at'],
      ["WHERE action = 'token.create'", 'audit_action_at'],
    ] as const) {
      const steps = plan(where);
      expect({ where, steps }).toEqual({ where, steps: expect.stringContaining(index) });
      expect(steps).not.toMatch(/TEMP B-TREE/);
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

import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StoreUnavailableError } from '@screenfleet/contracts';
import {
  createSqliteTokenStore,
  openSqliteConnection,
  openSqliteDatabase,
} from '@screenfleet/storage';
import { buildCode, buildToken, describeTokenStoreContract } from './token-store.contract';

// A real file in a temp directory, one per test, removed after it. Each store the contract opens
// has its own database on the file (its own writer thread: a second process, as far as SQLite
// can tell).
describeTokenStoreContract('sqlite (libsql)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-tokens-'));
  const file = path.join(dir, 'screenfleet.db');
  return Promise.resolve({
    open: () => createSqliteTokenStore({ file }),
    storedText: () => {
      const db = openSqliteConnection(file);
      try {
        return Promise.resolve(
          JSON.stringify([
            db.prepare('SELECT * FROM tokens').all(),
            db.prepare('SELECT * FROM enrolment_codes').all(),
          ]),
        );
      } finally {
        db.close();
      }
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  });
});

describe('sqlite token store', () => {
  let dir: string;
  let file: string;
  const toClose: Array<{ close(): unknown }> = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-tokens-'));
    file = path.join(dir, 'screenfleet.db');
  });

  afterEach(async () => {
    for (const closable of toClose.splice(0).reverse()) await closable.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('when the database is shared, then the tables sit in its file beside the others, and close leaves it open', async () => {
    const database = await openSqliteDatabase(file);
    toClose.push(database);
    const store = createSqliteTokenStore({ database });
    const token = buildToken();
    await store.insertToken(token);
    await store.close();

    expect(await createSqliteTokenStore({ database }).listTokens()).toEqual([token]);
    const tables = await database.readers.query<{ names: string }>(
      "SELECT group_concat(name) AS names FROM sqlite_schema WHERE type = 'table'",
      [],
    );
    expect(tables[0]!.names.split(',')).toEqual(
      expect.arrayContaining(['tokens', 'enrolment_codes']),
    );
  });

  it('when the tokens table was created by the version before rate limits, then the column is added, old rows read null, and new ones keep their limits', async () => {
    const old = openSqliteConnection(file);
    toClose.push(old);
    // The table exactly as the previous version created it, with one token in it.
    old.exec(`
      CREATE TABLE tokens (
        id TEXT PRIMARY KEY NOT NULL,
        name TEXT NOT NULL,
        scopes TEXT NOT NULL,
        devices TEXT,
        created_at_ms INTEGER NOT NULL,
        expires_at_ms INTEGER,
        last_used_at_ms INTEGER,
        revoked_at_ms INTEGER,
        secret_hash TEXT NOT NULL UNIQUE
      )`);
    const before = buildToken({ devices: ['office-1'] });
    old
      .prepare(
        `INSERT INTO tokens (id, name, scopes, devices, created_at_ms, secret_hash)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(
        before.id,
        before.name,
        JSON.stringify(before.scopes),
        JSON.stringify(before.devices),
        before.createdAt.getTime(),
        before.secretHash,
      );
    const columns = () =>
      (old.prepare('PRAGMA table_info(tokens)').all() as Array<{ name: string }>).map(
        (column) => column.name,
      );
    expect(columns()).not.toContain('rate_limits');

    const store = createSqliteTokenStore({ file });
    toClose.push(store);
    await store.ensureSchema();
    const second = createSqliteTokenStore({ file }); // a second start: the column is there
    toClose.push(second);
    await second.ensureSchema();

    expect(columns()).toContain('rate_limits');
    const limited = buildToken({
      createdAt: new Date(before.createdAt.getTime() + 1),
      rateLimits: { archive: { limit: 2, windowMs: 60_000 } },
    });
    await store.insertToken(limited);
    expect(await store.listTokens()).toEqual([{ ...before, rateLimits: null }, limited]);
  });

  it('when another connection holds the write lock past the busy timeout, then writes reject StoreUnavailableError naming the store, reads go on, and writes work once it lets go', async () => {
    const database = await openSqliteDatabase(file, { busyTimeoutMs: 200 });
    toClose.push(database);
    const store = createSqliteTokenStore({ database });
    const code = buildCode();
    await store.insertEnrolmentCode(code);
    const holder = openSqliteConnection(file);
    toClose.push(holder);
    holder.exec('BEGIN IMMEDIATE');

    const now = new Date();
    for (const [operation, run] of [
      ['insertToken', () => store.insertToken(buildToken())],
      ['revokeToken', () => store.revokeToken('tok_1', now)],
      ['recordLastUse', () => store.recordLastUse([{ id: 'tok_1', at: now }])],
      ['insertEnrolmentCode', () => store.insertEnrolmentCode(buildCode())],
      ['enrol', () => store.enrol(code.codeHash, now, () => buildToken())],
    ] as const) {
      const error = await run().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(`token store unavailable during ${operation}`);
    }
    expect(await store.listEnrolmentCodes()).toEqual([{ ...code, usesTaken: 0, revokedAt: null }]);

    holder.exec('ROLLBACK');
    expect((await store.enrol(code.codeHash, now, () => buildToken())).ok).toBe(true);
    expect(await store.listTokens()).toHaveLength(1);
  });
});

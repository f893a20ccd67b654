import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSqliteContentStore, openSqliteDatabase } from '@screenfleet/storage';

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('the SQLite file of the embedded mode is its owner’s only', () => {
  let parent: string;
  const umask = process.umask(0o022);

  beforeEach(() => {
    parent = mkdtempSync(path.join(os.tmpdir(), 'sf-sqlite-mode-'));
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));
  afterAll(() => process.umask(umask));

  it('when the database is created under umask 022 and written, then its directory is 0700 and the file, its -wal and -shm are 0600', async () => {
    const dir = path.join(parent, 'data');
    const file = path.join(dir, 'screenfleet.db');
    const database = await openSqliteDatabase(file);
    try {
      await createSqliteContentStore({ database }).ensureIndexes();

      expect(readdirSync(dir).sort()).toEqual([
        'screenfleet.db',
        'screenfleet.db-shm',
        'screenfleet.db-wal',
      ]);
      expect(modeOf(dir)).toBe(0o700);
      for (const name of readdirSync(dir))
        expect([name, modeOf(path.join(dir, name))]).toEqual([name, 0o600]);
    } finally {
      await database.close();
    }
  });
});

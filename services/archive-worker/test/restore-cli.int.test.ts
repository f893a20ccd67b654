import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { archiveKeyring, createArchiver } from '@screenfleet/archive-worker';
import {
  createFilesystemArchiveStore,
  createSqliteArchiveStateStore,
  createSqliteContentStore,
  openSqliteDatabase,
} from '@screenfleet/storage';
import { mongoUrl } from '../../../test/services';
import { allItems, byId, item, openStores, settings, type Stores } from './support';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../dist/entry/restore-cli.js');

describe('npm run archive:restore', () => {
  let s: Stores;
  beforeEach(async () => {
    s = await openStores('fs');
  });
  afterEach(() => s.close());

  it('when run with --from, --to and --device, then the archived items of that device and range come back, and a second run adds nothing', async () => {
    const key = 'cd'.repeat(32);
    const mine = [item(20, { device_name: 'laptop' }), item(19, { device_name: 'laptop' })];
    const other = [item(20, { device_name: 'desk' })];
    await s.content.insertItems([...mine, ...other]);
    await createArchiver({
      content: s.content,
      archive: s.archive,
      state: s.state,
      chunkSize: 2,
      defaults: settings(),
      keyring: archiveKeyring([Buffer.from(key, 'hex')]),
    }).runPass();
    expect(await allItems(s.content)).toEqual([]);
    const env = {
      PATH: process.env.PATH ?? '',
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: s.database,
      ARCHIVE_STORE: 'fs',
      ARCHIVE_DIR: s.dir!,
      ARCHIVE_ENCRYPTION_KEY: Buffer.from(key, 'hex').toString('base64'),
    };
    const args = [
      cli,
      '--from',
      '2000-01-01T00:00:00Z',
      '--to',
      new Date().toISOString(),
      '--device',
      'laptop',
    ];

    const whileEnabled = await run(process.execPath, args, { env }).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(whileEnabled).toMatchObject({ code: 1 });
    expect(JSON.stringify(whileEnabled)).toMatch(/disable the archive first/);
    const stored = await s.state.load(undefined as never);
    await s.state.save({ ...stored, settings: { ...stored.settings, enabled: false } });

    const first = await run(process.execPath, args, { env });
    const second = await run(process.execPath, args, { env });

    expect(JSON.parse(first.stdout)).toMatchObject({ restored: 2, alreadyStored: 0 });
    expect(JSON.parse(second.stdout)).toMatchObject({ restored: 0, alreadyStored: 2 });
    expect(byId(await allItems(s.content))).toEqual(byId(mine));
  });

  it('when run in the embedded mode (no MONGODB_URL), then it restores into the SQLite file and from the archive directory under DATA_DIR, while the embedded process has the file open', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'sf-restore-embedded-'));
    // What the embedded mode opens (libs/modes): DATA_DIR/screenfleet.db and DATA_DIR/archive.
    const database = await openSqliteDatabase(path.join(dataDir, 'screenfleet.db'));
    try {
      const content = createSqliteContentStore({ database });
      const state = createSqliteArchiveStateStore({ database });
      const archive = createFilesystemArchiveStore({ root: path.join(dataDir, 'archive') });
      await archive.ensureReady();
      const items = [item(20), item(19), item(18)];
      await content.insertItems(items);
      await createArchiver({
        content,
        archive,
        state,
        chunkSize: 2,
        defaults: settings(),
      }).runPass();
      expect(await allItems(content)).toEqual([]);
      await state.update({ settings: settings({ enabled: false }) });

      const result = await run(
        process.execPath,
        [cli, '--from', '2000-01-01T00:00:00Z', '--to', new Date().toISOString()],
        { env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir } },
      ).catch((error: { code: number; stdout: string; stderr: string }) => error);

      expect(JSON.parse(result.stdout)).toMatchObject({ restored: 3, alreadyStored: 0 });
      expect(byId(await allItems(content))).toEqual(byId(items));
    } finally {
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('when DATA_DIR holds no embedded database (and no MONGODB_URL is set), then it exits 1 naming the file, and creates nothing', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'sf-restore-empty-'));
    try {
      const result = await run(
        process.execPath,
        [cli, '--from', '2000-01-01T00:00:00Z', '--to', '2001-01-01T00:00:00Z'],
        { env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir } },
      ).catch((error: { code: number; stdout: string }) => error);

      expect(result).toMatchObject({ code: 1 });
      expect((result as { stdout: string }).stdout).toContain(
        `no embedded database at ${path.join(dataDir, 'screenfleet.db')}`,
      );
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('when --to is missing, then it exits 1 saying what is needed', async () => {
    const result = await run(process.execPath, [cli, '--from', '2000-01-01T00:00:00Z'], {
      env: { PATH: process.env.PATH ?? '', MONGODB_URL: mongoUrl() },
    }).catch((error: { code: number; stdout: string }) => error);

    expect(result).toMatchObject({ code: 1 });
    expect((result as { stdout: string }).stdout).toMatch(/--to needs an ISO 8601 time/);
  });
});

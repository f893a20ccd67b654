/**
 * Data at rest is its owner's only (issue 28, item 2): what the system writes under its data and
 * archive directories is readable by the user who runs it and nobody else, whatever the umask
 * (the launchers here inherit the test's 022, a shell's usual one), and a start that finds such a
 * directory open to others refuses with the fix, as it does for the token file.
 */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitUntil } from '../services/archive-worker/test/support';
import { MongoClient } from 'mongodb';
import { databaseName, isolatedBroker, mongoUrl } from './services';
import { buildItem } from './support/content';
import { post } from './support/gateway';
import { startService } from './support/processes';
import { startLauncher, type Launcher } from './support/system';

const DAY_MS = 86_400_000;
const modeOf = (file: string) => statSync(file).mode & 0o777;

/** Every directory and file below `root` with its mode, directories marked with a final "/". */
function modesBelow(root: string): Array<[string, number]> {
  const found: Array<[string, number]> = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const name = path.relative(root, full);
      if (entry.isDirectory()) {
        found.push([`${name}/`, modeOf(full)]);
        walk(full);
      } else {
        found.push([name, modeOf(full)]);
      }
    }
  };
  walk(root);
  return found;
}

describe('data at rest is its owner’s only', () => {
  let parent: string;
  const umask = process.umask(0o022);
  const launchers: Launcher[] = [];
  const launch = (env: Record<string, string>) => {
    const launcher = startLauncher(env);
    launchers.push(launcher);
    return launcher;
  };
  /** The exit code, or 'still running' once `ms` passed: a refusal comes at once. */
  const exitCode = (launcher: Launcher, ms = 20_000) =>
    Promise.race([
      launcher.exited,
      new Promise<string>((resolve) => setTimeout(() => resolve('still running'), ms).unref()),
    ]);

  beforeEach(() => {
    parent = mkdtempSync(path.join(os.tmpdir(), 'sf-at-rest-'));
  });
  afterEach(async () => {
    for (const launcher of launchers.splice(0)) await launcher.stop('SIGKILL');
    rmSync(parent, { recursive: true, force: true });
  });
  afterAll(() => process.umask(umask));

  it('when the embedded mode starts on a new data directory and archives, then every directory under it is 0700 and every file 0600 (database, WAL, archive objects, token, keys)', async () => {
    const dataDir = path.join(parent, 'data');
    const launcher = launch({
      DATA_DIR: dataDir,
      GATEWAY_PORT: '0',
      GATEWAY_OPS_PORT: '0',
      ARCHIVE_RETENTION_DAYS: '7',
      ARCHIVE_CHUNK_SIZE: '2',
    });
    try {
      const url = `http://127.0.0.1:${await launcher.apiPort}`;
      const token = readFileSync(path.join(dataDir, 'gateway-token'), 'utf8').trim();
      const old = Array.from({ length: 3 }, (_, i) =>
        buildItem(i, { timestamp: new Date(Date.now() - 40 * DAY_MS + i * 1000).toISOString() }),
      );
      const added = await post(
        `${url}/add`,
        { device_name: 'at-rest', content: { content_type: 'frames', data: old } },
        token,
      );
      expect(added.status).toBe(200);
      expect((await post(`${url}/archive/init`, {}, token)).status).toBe(200);
      const status = await waitUntil(
        async () =>
          (await fetch(`${url}/archive/status`, {
            headers: { authorization: `Bearer ${token}` },
          }).then((response) => response.json())) as { pending_count: number },
        (body) => body.pending_count === 0,
      );
      expect(status.pending_count).toBe(0);

      const modes = modesBelow(dataDir);
      expect(modeOf(dataDir)).toBe(0o700);
      expect(modes.map(([name]) => name)).toEqual(
        expect.arrayContaining([
          'screenfleet.db',
          'screenfleet.db-wal',
          'screenfleet.db-shm',
          'gateway-token',
          'archive/',
          'archive/chunks/',
          'archive/manifests/',
          'operator-keys/',
          'operator-keys/command-signing.key.pem',
        ]),
      );
      expect(
        modes.filter(([name]) => name.startsWith('archive/chunks/') && !name.endsWith('/')),
      ).not.toHaveLength(0);
      expect(modes.filter(([name, mode]) => mode !== (name.endsWith('/') ? 0o700 : 0o600))).toEqual(
        [],
      );
    } finally {
      expect(await launcher.stop('SIGINT')).toBe(0);
    }
  });

  it.each([
    ['the data directory', 'DATA_DIR', 'data directory (DATA_DIR)'],
    ['the archive directory', 'ARCHIVE_DIR', 'archive directory (ARCHIVE_DIR)'],
  ])(
    'when the embedded mode finds %s open to others, then it refuses to start with the fix',
    async (_, variable, what) => {
      const dataDir = path.join(parent, 'data');
      mkdirSync(dataDir, { mode: 0o700 });
      const dir = variable === 'DATA_DIR' ? dataDir : path.join(parent, 'archive');
      mkdirSync(dir, { recursive: true });
      chmodSync(dir, 0o755);
      const launcher = launch({
        DATA_DIR: dataDir,
        ARCHIVE_DIR: path.join(parent, 'archive'),
        GATEWAY_PORT: '0',
        GATEWAY_OPS_PORT: '0',
      });

      expect(await exitCode(launcher)).toBe(1);
      expect(launcher.output()).toContain(
        `${what} ${dir} is open to other users (mode 755): run chmod 700 ${dir}`,
      );
      expect(modeOf(dir)).toBe(0o755);
    },
  );

  it('when the distributed launcher finds its data directory open to others, then it refuses before starting any service', async () => {
    const dataDir = path.join(parent, 'data');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o750);
    const launcher = launch({
      DATA_DIR: dataDir,
      RABBITMQ_URL: 'amqp://guest:guest@127.0.0.1:1',
      MONGODB_URL: 'mongodb://127.0.0.1:1/',
    });

    expect(await exitCode(launcher)).toBe(1);
    expect(launcher.output()).toContain(
      `data directory (DATA_DIR) ${dataDir} is open to other users (mode 750): run chmod 700 ${dataDir}`,
    );
    expect(launcher.output()).not.toMatch(/started (ingest|archive)-worker/);
  });

  it('when a distributed archive worker finds its archive directory open to others, then it exits 1 with the fix; a new one is created 0700', async () => {
    const broker = await isolatedBroker();
    const database = databaseName('at_rest');
    try {
      const env = (dir: string) => ({
        RABBITMQ_URL: broker.url,
        MONGODB_URL: mongoUrl(),
        MONGODB_DATABASE: database,
        ARCHIVE_OPS_PORT: '0',
        ARCHIVE_STORE: 'fs',
        ARCHIVE_DIR: dir,
      });
      const open = path.join(parent, 'open-archive');
      mkdirSync(open);
      chmodSync(open, 0o755);
      const refused = startService('archive-worker', env(open));
      expect(await refused.exited(20_000)).toBe(1);
      expect(JSON.stringify(refused.lines)).toContain(
        `archive directory (ARCHIVE_DIR) ${open} is open to other users (mode 755): run chmod 700 ${open}`,
      );

      const fresh = path.join(parent, 'new-archive');
      const started = startService('archive-worker', env(fresh));
      try {
        await started.waitForLog(/archive worker started/);
        expect(modeOf(fresh)).toBe(0o700);
      } finally {
        await started.stop();
      }
    } finally {
      const client = new MongoClient(mongoUrl());
      await client
        .db(database)
        .dropDatabase()
        .finally(() => client.close());
      await broker.remove();
    }
  });
});

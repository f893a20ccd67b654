import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  createEnvelope,
  queueNames,
  type ContentBatch,
  type Envelope,
} from '@screenfleet/contracts';
import {
  createSqliteDeadLetters,
  openSqliteDatabase,
  type SqliteDatabase,
} from '@screenfleet/storage';
import { startSystem, type RunningSystem } from './support/system';

const root = path.resolve(__dirname, '..');
const run = promisify(execFile);

function batch(device: string): Envelope<ContentBatch> {
  return createEnvelope('content.batch', {
    received_at: new Date().toISOString(),
    request: {
      device_name: device,
      content: {
        content_type: 'frames',
        data: [
          { file_path: `${device}/a.png`, timestamp: '2026-11-20T10:00:00Z' },
          { file_path: `${device}/b.png`, timestamp: '2026-11-20T10:00:01Z' },
        ],
      },
    },
  });
}

/** `npm run dead-letters:replay` as an operator runs it beside an embedded server: no broker. */
function replay(dataDir: string, ...args: string[]) {
  const { RABBITMQ_URL: _broker, ...env } = process.env;
  return run(
    'npm',
    ['run', '--silent', 'dead-letters:replay', ...(args.length ? ['--', ...args] : [])],
    {
      cwd: root,
      env: { ...env, DATA_DIR: dataDir },
    },
  );
}

// The embedded mode keeps its dead letters in the SQLite file (dead_letters); the replay writes
// them into the content store beside a running server, as the ingest worker would have.
describe('dead letters in the embedded mode', () => {
  let system: RunningSystem;
  let database: SqliteDatabase;

  beforeAll(async () => {
    system = await startSystem('embedded');
    database = await openSqliteDatabase(path.join(system.dataDir, 'screenfleet.db'));
  });

  afterAll(async () => {
    await database?.close();
    await system?.stop();
  });

  const storedFrom = async (device: string) =>
    (
      await system.content.search({
        terms: [],
        contentTypes: ['frames'],
        devices: [device],
        order: 'newest',
        limit: 0,
        offset: 0,
      })
    ).total;

  it('when dead letters are replayed, then their batches are stored and removed, a limit is kept, and what cannot be stored stays, said why', async () => {
    const letters = createSqliteDeadLetters({ database });
    await letters.add(queueNames.ingestContent, batch('dead-1'), 'delivery_limit');
    await letters.add(queueNames.ingestContent, { type: 'content.batch' }, 'rejected');
    await letters.add(queueNames.ingestContent, batch('dead-2'), 'delivery_limit');

    const limited = await replay(system.dataDir, '--limit', '1');
    expect(limited.stdout).toContain('replayed 1 dead letter(s)');
    expect(await storedFrom('dead-1')).toBe(2);
    expect(await storedFrom('dead-2')).toBe(0);
    expect((await letters.list()).map((letter) => letter.seq)).toEqual([2, 3]);

    const rest = await replay(system.dataDir);
    expect(rest.stdout).toContain('left dead letter 2: not a content.batch v1');
    expect(rest.stdout).toContain('replayed 1 dead letter(s)');
    expect(rest.stdout).toContain('1 left');
    expect(await storedFrom('dead-2')).toBe(2);
    expect((await letters.list()).map((letter) => letter.seq)).toEqual([2]);

    // A second replay of a batch finds its items stored already: nothing doubles.
    await letters.add(queueNames.ingestContent, batch('dead-1'), 'delivery_limit');
    expect((await replay(system.dataDir)).stdout).toContain('replayed 1 dead letter(s)');
    expect(await storedFrom('dead-1')).toBe(2);
  });

  it('when DATA_DIR holds no database, then it says so and creates none', async () => {
    const empty = path.join(system.dataDir, 'nothing-here');
    const failure = await replay(empty).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toMatch(/no SQLite file at .*nothing-here/);
    expect(existsSync(empty)).toBe(false);
  });
});

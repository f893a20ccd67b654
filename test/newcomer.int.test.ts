/**
 * A newcomer's machine has only Node and npm. This machine runs RabbitMQ and has Go, so the
 * scenario (support/newcomer-scenario.ts) runs in a network namespace of its own, where nothing
 * of this machine listens, with a PATH that holds no `go` (notes/newcomer-test.md), on a fresh
 * clone of this repository: `npm start` with no variables must run the whole system there.
 *
 * The clone gets this checkout's node_modules as hard links: `npm ci` cannot run inside the
 * namespace (no registry), and what it would install is what the lock file says, as here.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

/** PATH without the directories that hold a `go`. */
function pathWithoutGo(): string {
  return (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => {
      try {
        accessSync(path.join(dir, 'go'), constants.X_OK);
        return false;
      } catch {
        return true;
      }
    })
    .join(':');
}

function run(command: string, args: string[], cwd = root) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

describe('a newcomer with only Node runs `npm start` on a fresh clone', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-newcomer-'));
    run('git', ['clone', '--quiet', root, path.join(dir, 'clone')]);
    // Installed packages, including the workspaces' own node_modules (relative links stay).
    run('cp', ['-al', path.join(root, 'node_modules'), path.join(dir, 'clone', 'node_modules')]);
    for (const group of ['libs', 'services']) {
      for (const name of readdirSync(path.join(root, group))) {
        const own = path.join(root, group, name, 'node_modules');
        try {
          accessSync(own);
        } catch {
          continue;
        }
        run('cp', ['-al', own, path.join(dir, 'clone', group, name, 'node_modules')]);
      }
    }
  }, 120_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('then with no broker, no database server and no Go it stores, answers, survives Ctrl-C and a SIGKILL right after accepted batches', () => {
    const clone = path.join(dir, 'clone');
    const scenario = [
      process.execPath,
      '--import',
      'tsx',
      path.join(root, 'test/support/newcomer-scenario.ts'),
      clone,
    ];
    // sh, not bash: bash may read ~/.bashrc even with -c, which can put go back on PATH.
    const result = spawnSync(
      'unshare',
      ['-n', 'sh', '-c', 'ip link set lo up && exec "$@"', 'newcomer', ...scenario],
      {
        cwd: root,
        encoding: 'utf8',
        env: { PATH: pathWithoutGo(), HOME: process.env.HOME ?? '' },
        timeout: 540_000,
      },
    );
    const lines = result.stdout.trim().split('\n');
    const report = JSON.parse(lines[lines.length - 1] || '{}') as Record<string, unknown>;
    if (typeof report.error === 'string' || result.status !== 0) {
      throw new Error(
        `scenario failed (${result.status}): ${result.stdout}\nstderr: ${result.stderr}`,
      );
    }

    expect(report).toMatchObject({
      goOnPath: false,
      brokerPortOpen: false,
      port: 3030,
      nodeOptions: ['--max-semi-space-size=2', '--heap-growing-percent=50'],
      firstPost: 200,
      storedAfterPost: 3,
      archiveStatus: { status: 200, body: { pending_count: 0, storage_used: 0 } },
      stoppedCleanly: true,
      storedAfterRestart: 3,
      lostAfterKill: 0,
      thirdStoppedCleanly: true,
    });
    expect(report.acknowledged).toBeGreaterThanOrEqual(200);
    expect(report.storedAfterKill).toBeGreaterThanOrEqual(3 + Number(report.acknowledged));
  }, 600_000);
});

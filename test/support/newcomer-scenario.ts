/**
 * What a newcomer does on a machine with only Node, run inside a network namespace of its own
 * (nothing of this machine listens there) by test/newcomer.int.test.ts:
 *
 *   node --import tsx test/support/newcomer-scenario.ts <fresh clone>
 *
 * `npm start` in the clone with no variables, a batch posted and read back from the SQLite
 * file, /archive/status, Ctrl-C, a start again that finds the data, then a burst of batches and
 * a SIGKILL right after the last acknowledged one: after a restart every acknowledged item is
 * there. Prints one JSON line with what it saw; the test asserts on it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createSqliteContentStore, openSqliteDatabase } from '@screenfleet/storage';
import { portOpen } from '../../bin/ports';
import { buildBatch } from './content';

const clone = path.resolve(process.argv[2] ?? '.');
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };

interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
}

/** Process groups started here: a scenario ended from outside (a timeout) takes them along. */
const groups = new Set<number>();
process.on('SIGTERM', () => {
  for (const group of groups) process.kill(-group, 'SIGKILL');
  process.exit(1);
});

/** `npm start` in the clone; resolves once it announced its API. */
function npmStart(): Promise<Started> {
  // Its own process group, as a terminal gives it: Ctrl-C and a crash reach the whole group.
  const child = spawn('npm', ['start'], {
    cwd: clone,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  groups.add(child.pid!);
  child.once('exit', () => groups.delete(child.pid!));
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no API after 240 s:\n${output}`)), 240_000);
    for (const stream of [child.stdout, child.stderr]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        output = (output + line + '\n').slice(-20_000);
        const announced = /API on http:\/\/[^:]+:(\d+)/.exec(line);
        if (announced) {
          clearTimeout(timer);
          resolve({ child, port: Number(announced[1]), output: () => output });
        }
      });
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}) before its API:\n${output}`));
    });
  });
}

/**
 * The node options the server process runs with (README: `npm start` sets its memory ones), read
 * from its command line.
 */
function serverNodeOptions(started: Started): string[] {
  // node itself, not the shell npm runs the script in (its command line names the file too).
  const found = spawnSync(
    'pgrep',
    ['-g', String(started.child.pid), '-f', '^[^ ]*node .*bin/dist/start\\.js'],
    { encoding: 'utf8' },
  );
  const pid = found.stdout.trim();
  if (!/^\d+$/.test(pid)) throw new Error(`no single server process: ${found.stdout}`);
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return argv.filter((arg) => arg.startsWith('--'));
}

/** Ctrl-C (SIGINT to the group) or a crash (SIGKILL to the group); resolves once npm exited. */
function signalGroup(started: Started, signal: NodeJS.Signals): Promise<void> {
  const exited = new Promise<void>((resolve) => started.child.once('close', () => resolve()));
  process.kill(-started.child.pid!, signal);
  return exited;
}

async function post(port: number, token: string, body: unknown): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/add`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

async function storedIds(): Promise<Set<string>> {
  const database = await openSqliteDatabase(path.join(clone, 'data', 'screenfleet.db'));
  try {
    const store = createSqliteContentStore({ database });
    const ids = new Set<string>();
    for await (const chunk of store.scanRange(
      { to: new Date('2200-01-01') },
      { chunkSize: 1000 },
    )) {
      for (const doc of chunk) ids.add(`${doc.device_name}|${doc.file_path}`);
    }
    return ids;
  } finally {
    await database.close();
  }
}

async function main() {
  const report: Record<string, unknown> = {
    goOnPath: spawnSync('sh', ['-c', 'command -v go'], { env }).status === 0,
    brokerPortOpen: await portOpen(5672),
  };

  const first = await npmStart();
  report.port = first.port;
  report.nodeOptions = serverNodeOptions(first);
  const token = readFileSync(path.join(clone, 'data', 'gateway-token'), 'utf8').trim();
  report.firstPost = await post(first.port, token, buildBatch('newcomer', 0, 3));
  report.storedAfterPost = (await storedIds()).size;
  const status = await fetch(`http://127.0.0.1:${first.port}/archive/status`, {
    headers: { authorization: `Bearer ${token}` },
  });
  report.archiveStatus = { status: status.status, body: await status.json() };
  await signalGroup(first, 'SIGINT');
  report.stoppedCleanly = /^\[start\] stopped$/m.test(first.output());

  const second = await npmStart();
  report.storedAfterRestart = (await storedIds()).size;

  // A burst, and a SIGKILL as soon as the 20th batch was acknowledged (more still in flight).
  const acknowledged: string[] = [];
  let killed = false;
  const sends = Array.from({ length: 40 }, (_, i) => {
    const batch = buildBatch(`burst-${i}`, 1000 + i * 10, 10);
    return post(second.port, token, batch)
      .then((code) => {
        if (code === 200 && !killed) {
          acknowledged.push(...batch.content.data.map((item) => `burst-${i}|${item.file_path}`));
          if (acknowledged.length >= 200) {
            killed = true;
            void signalGroup(second, 'SIGKILL');
          }
        }
      })
      .catch(() => undefined); // cut off by the kill: not acknowledged
  });
  await Promise.all(sends);
  if (!killed) await signalGroup(second, 'SIGKILL');
  if (second.child.exitCode === null && second.child.signalCode === null)
    await new Promise((resolve) => second.child.once('exit', resolve));
  report.acknowledged = acknowledged.length;

  const third = await npmStart();
  const after = await storedIds();
  report.lostAfterKill = acknowledged.filter((id) => !after.has(id)).length;
  report.storedAfterKill = after.size;
  await signalGroup(third, 'SIGINT');
  report.thirdStoppedCleanly = /^\[start\] stopped$/m.test(third.output());
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error: unknown) => {
  process.stdout.write(
    `${JSON.stringify({ error: String(error instanceof Error ? error.stack : error) })}\n`,
  );
  process.exit(1);
});

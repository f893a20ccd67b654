import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@screenfleet/runtime';
import { startPidFileProcess, stopPidFileProcess } from './pid-file-process';
import { portOpen } from './ports';
import { projectRoot } from './project-root';

const toolDir = path.join(projectRoot, 'tools/ferretdb');

export interface FerretDbHandle {
  url: string;
  port: number;
  dataDir: string;
  pidFile: string;
}

let binary: string | undefined;

/**
 * The binary's path, built first unless this machine has it already (tools/ferretdb/build.sh
 * decides, and prints where it is).
 */
export function buildFerretDb(): string {
  if (binary) return binary;
  const result = spawnSync('bash', [path.join(toolDir, 'build.sh')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (result.status !== 0)
    throw new Error('tools/ferretdb/build.sh failed: cannot build the test database server');
  binary = result.stdout.trim();
  return binary;
}

/** Starts FerretDB on `port` over `dataDir`; the PID goes to a file so any process can stop it. */
export async function startFerretDb(options: {
  port: number;
  dataDir: string;
}): Promise<FerretDbHandle> {
  mkdirSync(options.dataDir, { recursive: true });
  const pidFile = path.join(options.dataDir, 'ferretdb.pid');
  startPidFileProcess({
    command: buildFerretDb(),
    args: ['-listen', `127.0.0.1:${options.port}`, '-data-dir', options.dataDir],
    pidFile,
  });
  await waitFor(() => portOpen(options.port), {
    timeoutMs: 15_000,
    what: `FerretDB to listen on 127.0.0.1:${options.port}`,
  });
  return {
    url: `mongodb://127.0.0.1:${options.port}/`,
    port: options.port,
    dataDir: options.dataDir,
    pidFile,
  };
}

/** Kills the running FerretDB (SIGKILL by default, as a crash would) and waits until it is gone. */
export function stopFerretDb(pidFile: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  return stopPidFileProcess(pidFile, signal, { name: 'FerretDB', timeoutMs: 5000 });
}

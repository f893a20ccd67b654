import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const toolDir = path.resolve(__dirname, '../tools/ferretdb');

export interface FerretDbHandle {
  url: string;
  port: number;
  dataDir: string;
  pidFile: string;
}

/** Builds the binary unless it is already up to date (tools/ferretdb/build.sh decides). */
export function buildFerretDb(): string {
  const result = spawnSync('bash', [path.join(toolDir, 'build.sh')], { stdio: 'inherit' });
  if (result.status !== 0)
    throw new Error('tools/ferretdb/build.sh failed: cannot build the test database server');
  return path.join(toolDir, 'bin/ferretdb');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline)
      throw new Error(`FerretDB did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts FerretDB on `port` over `dataDir`; the PID goes to a file so any process can stop it. */
export async function startFerretDb(options: {
  port: number;
  dataDir: string;
}): Promise<FerretDbHandle> {
  mkdirSync(options.dataDir, { recursive: true });
  const bin = path.join(toolDir, 'bin/ferretdb');
  const child = spawn(bin, ['-listen', `127.0.0.1:${options.port}`, '-data-dir', options.dataDir], {
    stdio: 'ignore',
    detached: true,
  });
  child.unref();
  const pidFile = path.join(options.dataDir, 'ferretdb.pid');
  writeFileSync(pidFile, String(child.pid));
  await waitForPort(options.port, 15_000);
  return {
    url: `mongodb://127.0.0.1:${options.port}/`,
    port: options.port,
    dataDir: options.dataDir,
    pidFile,
  };
}

/** Kills the running FerretDB (SIGKILL by default, as a crash would) and waits until it is gone. */
export async function stopFerretDb(
  pidFile: string,
  signal: NodeJS.Signals = 'SIGKILL',
): Promise<void> {
  const pid = Number(readFileSync(pidFile, 'utf8'));
  try {
    process.kill(pid, signal);
  } catch {
    return; // already gone
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`FerretDB (pid ${pid}) did not stop`);
}

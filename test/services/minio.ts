import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const buildScript = path.resolve(__dirname, '../../tools/minio/build.sh');

/** Everything needed to reach this MinIO, and to stop and restart it on the same data. */
export interface MinioHandle {
  endpoint: string;
  port: number;
  dataDir: string;
  pidFile: string;
  accessKey: string;
  secretKey: string;
  bin: string;
}

/** Builds the pinned binary unless it is already there (tools/minio/build.sh decides). */
export function buildMinio(): string {
  const result = spawnSync('bash', [buildScript], { stdio: ['ignore', 'pipe', 'inherit'] });
  const bin = result.stdout.toString().trim().split('\n').pop() ?? '';
  if (result.status !== 0 || !bin)
    throw new Error('tools/minio/build.sh failed: cannot build the test S3 server');
  return bin;
}

/** Root credentials of their own per run: nothing else on the machine can write to this store. */
export function randomCredentials(): { accessKey: string; secretKey: string } {
  return {
    accessKey: `sf${randomBytes(6).toString('hex')}`,
    secretKey: randomBytes(18).toString('base64url'),
  };
}

async function waitForLive(endpoint: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const live = await fetch(`${endpoint}/minio/health/live`, {
      signal: AbortSignal.timeout(1000),
    }).then(
      (response) => response.ok,
      () => false,
    );
    if (live) return;
    if (Date.now() > deadline)
      throw new Error(`MinIO did not answer ${endpoint}/minio/health/live within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts MinIO on `port` over `dataDir` (its console on an OS-chosen port, which nothing uses) and
 * waits until it is live. The PID goes to a file so any process (a test worker) can stop it.
 */
export async function startMinioServer(options: {
  bin: string;
  port: number;
  dataDir: string;
  accessKey: string;
  secretKey: string;
}): Promise<MinioHandle> {
  const { bin, port, dataDir, accessKey, secretKey } = options;
  mkdirSync(dataDir, { recursive: true });
  const child = spawn(
    bin,
    ['server', dataDir, '--address', `127.0.0.1:${port}`, '--console-address', '127.0.0.1:0'],
    {
      stdio: 'ignore',
      detached: true,
      env: {
        ...process.env,
        MINIO_ROOT_USER: accessKey,
        MINIO_ROOT_PASSWORD: secretKey,
        MINIO_BROWSER: 'off',
        MINIO_UPDATE: 'off',
      },
    },
  );
  child.unref();
  // The PID file lives beside, not inside, the data directory: MinIO owns that one.
  const pidFile = `${dataDir}.pid`;
  writeFileSync(pidFile, String(child.pid));
  const endpoint = `http://127.0.0.1:${port}`;
  await waitForLive(endpoint, 30_000);
  return { endpoint, port, dataDir, pidFile, accessKey, secretKey, bin };
}

/** Stops MinIO (SIGTERM: a clean stop; SIGKILL: a crash) and waits until it is gone. */
export async function stopMinioServer(
  pidFile: string,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  const pid = Number(readFileSync(pidFile, 'utf8'));
  try {
    process.kill(pid, signal);
  } catch {
    return; // already gone
  }
  for (let i = 0; i < 400; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`MinIO (pid ${pid}) did not stop within 10 s`);
}

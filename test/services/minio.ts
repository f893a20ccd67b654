import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@screenfleet/runtime';
import { startPidFileProcess, stopPidFileProcess } from '../../bin/pid-file-process';

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
  // The PID file lives beside, not inside, the data directory: MinIO owns that one.
  const pidFile = `${dataDir}.pid`;
  startPidFileProcess({
    command: bin,
    args: ['server', dataDir, '--address', `127.0.0.1:${port}`, '--console-address', '127.0.0.1:0'],
    pidFile,
    env: {
      ...process.env,
      MINIO_ROOT_USER: accessKey,
      MINIO_ROOT_PASSWORD: secretKey,
      MINIO_BROWSER: 'off',
      MINIO_UPDATE: 'off',
    },
  });
  const endpoint = `http://127.0.0.1:${port}`;
  await waitFor(
    () =>
      fetch(`${endpoint}/minio/health/live`, { signal: AbortSignal.timeout(1000) }).then(
        (response) => response.ok,
        () => false,
      ),
    { timeoutMs: 30_000, intervalMs: 100, what: `MinIO to answer ${endpoint}/minio/health/live` },
  );
  return { endpoint, port, dataDir, pidFile, accessKey, secretKey, bin };
}

/** Stops MinIO (SIGTERM: a clean stop; SIGKILL: a crash) and waits until it is gone. */
export function stopMinioServer(
  pidFile: string,
  signal: NodeJS.Signals = 'SIGTERM',
): Promise<void> {
  return stopPidFileProcess(pidFile, signal, { name: 'MinIO', timeoutMs: 10_000 });
}

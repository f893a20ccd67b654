/**
 * What the ingest benchmarks share: the load generator run as its own process
 * (bench/ingest-load.ts, so it does not share a CPU queue with the server) and the server's peak
 * memory.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface IngestLoad {
  url: string;
  token: string;
  device: string;
  batches: number;
  items: number;
  concurrency: number;
  /** Batches per second; 0: as fast as the server answers. */
  rate?: number;
}

/**
 * Posts the batches and returns every POST /add latency (ms), the count of each status and the
 * wall time (s). Any answer but 200 throws unless `allowFailures`.
 */
export async function runIngestLoad(
  load: IngestLoad,
  options: { allowFailures?: boolean } = {},
): Promise<{ latencies: number[]; statuses: Record<string, number>; seconds: number }> {
  const { stdout } = await run(
    process.execPath,
    [
      require.resolve('tsx/cli'),
      '--tsconfig',
      path.resolve(__dirname, '../tsconfig.check.json'),
      path.join(__dirname, 'ingest-load.ts'),
      load.url,
      load.token,
      load.device,
      String(load.batches),
      String(load.items),
      String(load.concurrency),
      String(load.rate ?? 0),
    ],
    { maxBuffer: 64 * 1024 * 1024, timeout: 180_000 },
  );
  const result = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as {
    latencies: number[];
    statuses: Record<string, number>;
    seconds: number;
  };
  const failed = Object.entries(result.statuses).filter(([status]) => status !== '200');
  if (failed.length > 0 && !options.allowFailures) {
    throw new Error(`POST /add answered ${JSON.stringify(Object.fromEntries(failed))}`);
  }
  return result;
}

/** Peak resident set (VmHWM) of a process, in MB. */
export function peakRssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return Math.round(kb / 102.4) / 10;
}

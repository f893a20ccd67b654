/**
 * bench:oversized-body — what one oversized but well-formed body costs the gateway (issue 19.1):
 * POST /add with a valid token and a 16 MB body whose content.data is 8 million zeros.
 *
 * A real gateway process (its built main) against the local RabbitMQ, in a vhost of its own;
 * all traffic to 127.0.0.1, bounded in runs and requests. Per run it measures the 400's latency
 * (request start to the end of the answer), the worst /healthz latency on the gateway's ops port
 * while that request is in flight, and the gateway's peak RSS while 10 such bodies are sent at
 * once. Prints medians over the runs as one JSON line last.
 *
 * Targets: 400 < 200 ms, /healthz < 50 ms, RSS bounded (a few hundred MB at most, not GBs).
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { rabbitmqctl } from '../test/services/rabbitmqctl';
import { startService } from '../test/support/processes';
import { median } from './stats';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const CONCURRENT = 10;
const ZEROS = 8_000_000;
const TOKEN = 'bench-token-oversized-0123456789';
const BROKER = process.env.RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

function log(message: string): void {
  process.stderr.write(`[bench:oversized-body] ${message}\n`);
}

/** `{"device_name":"bench","content":{"content_type":"frames","data":[0,0,...]}}`, ~16 MB. */
function oversizedBody(): Buffer {
  const head = '{"device_name":"bench","content":{"content_type":"frames","data":[';
  const tail = ']}}';
  const zeros = Buffer.alloc(ZEROS * 2 - 1, '0,');
  return Buffer.concat([Buffer.from(head), zeros, Buffer.from(tail)]);
}

function send(
  url: string,
  body: Buffer,
): Promise<{ status: number; ms: number; rule: string | undefined }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'content-length': String(body.length),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const answer = JSON.parse(Buffer.concat(chunks).toString()) as {
            errors?: Array<{ path: string; rule: string }>;
          };
          const first = answer.errors?.[0];
          resolve({
            status: response.statusCode ?? 0,
            ms: performance.now() - started,
            rule: first && `${first.path} ${first.rule}`,
          });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

async function timedGet(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  return performance.now() - started;
}

/** Polls /healthz back to back until `until` settles; returns the slowest answer's latency. */
async function worstHealthz(url: string, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => (done = true));
  let worst = 0;
  while (!done) worst = Math.max(worst, await timedGet(url));
  return worst;
}

function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return Math.round(kb / 102.4) / 10;
}

/** Samples the process's RSS every 5 ms until `until` settles; returns the peak. */
async function peakRss(pid: number, until: Promise<unknown>): Promise<number> {
  let peak = rssMb(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 5);
  try {
    await until;
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, rssMb(pid));
}

async function main(): Promise<void> {
  const vhost = `sf-bench-oversized-${process.pid}`;
  await rabbitmqctl(['add_vhost', vhost]);
  const brokerUrl = new URL(BROKER);
  await rabbitmqctl(['set_permissions', '-p', vhost, brokerUrl.username, '.*', '.*', '.*']);
  brokerUrl.pathname = `/${encodeURIComponent(vhost)}`;
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const opsPort = port + 1;
  const gateway = startService('gateway', {
    RABBITMQ_URL: brokerUrl.toString(),
    LOG_LEVEL: 'info',
    GATEWAY_PORT: String(port),
    GATEWAY_OPS_PORT: String(opsPort),
    GATEWAY_TOKENS: JSON.stringify([{ id: 'bench', token: TOKEN, scopes: ['ingest'] }]),
  });
  try {
    await gateway.waitForLog(/gateway listening/);
    const pid = gateway.child.pid ?? 0;
    const url = `http://127.0.0.1:${port}/add`;
    const healthz = `http://127.0.0.1:${opsPort}/healthz`;
    const body = oversizedBody();
    log(`body: ${body.length} bytes; ${RUNS} runs`);
    // One unmeasured request first, so that the runs measure the gateway, not its JIT warm-up.
    await send(url, body);
    const idleRss = rssMb(pid);

    const latencies: number[] = [];
    const healthzWorst: number[] = [];
    const peaks: number[] = [];
    let answer: { status: number; rule: string | undefined } | undefined;
    for (let run = 1; run <= RUNS; run += 1) {
      const one = send(url, body);
      const [result, worst] = await Promise.all([one, worstHealthz(healthz, one)]);
      if (result.status !== 400) throw new Error(`expected 400, got ${result.status}`);
      answer = result;
      latencies.push(result.ms);
      healthzWorst.push(worst);

      const many = Promise.all(Array.from({ length: CONCURRENT }, () => send(url, body)));
      const peak = await peakRss(pid, many);
      const statuses = (await many).map((r) => r.status);
      if (statuses.some((status) => status !== 400))
        throw new Error(`expected 400s, got ${statuses.join(',')}`);
      peaks.push(peak);
      log(
        `run ${run}: 400 in ${result.ms.toFixed(1)} ms, /healthz worst ${worst.toFixed(1)} ms, RSS peak under ${CONCURRENT} concurrent ${peak} MB`,
      );
    }
    const round = (value: number) => Math.round(value * 10) / 10;
    const result = {
      bench: 'oversized-body',
      body_bytes: body.length,
      runs: RUNS,
      answer: `${answer?.status} ${answer?.rule}`,
      latency_400_ms_median: round(median(latencies)),
      healthz_worst_ms_median: round(median(healthzWorst)),
      concurrent: CONCURRENT,
      rss_idle_mb: idleRss,
      rss_peak_mb_median: round(median(peaks)),
      rss_high_water_mb: rssMb(pid, 'VmHWM'),
      targets: { latency_400_ms: 200, healthz_ms: 50 },
      met: median(latencies) < 200 && median(healthzWorst) < 50,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await gateway.stop();
    await rabbitmqctl(['delete_vhost', vhost]);
  }
}

main().catch((error: unknown) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});

/**
 * bench:ingest — end-to-end ingest throughput and POST /add latency against two baselines
 * measured in the same run, alternated over BENCH_RUNS runs (medians reported). Bounded: a fixed
 * number of batches per phase and a 2-minute cap per phase; all traffic goes to 127.0.0.1.
 * Prints one JSON line last.
 *
 * Baselines: the same batches published straight to RabbitMQ with confirms and inserted into the
 * store by a minimal consumer (no HTTP, no validation, no envelope, no counters), as
 * - `thin`: each item as sent, with an _id, into a collection with no index;
 * - `same_docs`: the documents our store writes (toDocuments + its search fields) into a
 *   collection with the store's indexes (none on FerretDB: it uses none).
 * Ours: gateway + ingest worker as separate processes, load from a third process.
 * Each phase's CPU seconds per process are reported, and the store's CPU per item (FerretDB's,
 * when it runs here) against each baseline's.
 *
 * Authentication's cost (issue #40): half-load runs alternated between two more gateways, one
 * that checks nothing (tokenless loopback clients, no rate limits) and one with what production
 * does per request: a stored token (from POST /tokens, held by the gateway's token cache) and
 * the default rate limits.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { MongoClient, type Collection } from 'mongodb';
import type { AddRequest } from '@screenfleet/contracts';
import { toDocuments } from '@screenfleet/ingest-worker';
import { waitFor } from '@screenfleet/runtime';
import { createMongoContentStore } from '@screenfleet/storage';
import { searchFields } from '../libs/storage/src/mongo.content-search';
import { buildBatch } from '../test/support/content';
import { startService, type ServiceProcess } from '../test/support/processes';
import { startTestServices } from '../test/services/start';
import { peakRssMb, runIngestLoad } from './load-runner';
import { median, percentiles } from './stats';

const BATCHES = Number(process.env.BENCH_BATCHES ?? 200);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const TOKEN = 'bench-token-0123456789abcdef';
const ADMIN = 'bench-admin-0123456789abcdef';
/** The gateway's default rate limits (its config's), which test processes otherwise turn off. */
const DEFAULT_LIMITS = {
  GATEWAY_RATE_LIMIT_INGEST: '60000/1m',
  GATEWAY_RATE_LIMIT_SEARCH: '600/1m',
  GATEWAY_RATE_LIMIT_OPERATOR: '600/1m',
  GATEWAY_RATE_LIMIT_ARCHIVE: '600/1m',
  GATEWAY_RATE_LIMIT_ADMIN: '600/1m',
  GATEWAY_RATE_LIMIT_UNAUTHENTICATED: '60/1m',
};
const run = promisify(execFile);

function log(message: string): void {
  process.stderr.write(`[bench:ingest] ${message}\n`);
}

/** Resolves once the store holds `expected` items: the worker writes them in another process. */
async function waitForCount(
  collection: Pick<Collection, 'estimatedDocumentCount'>,
  expected: number,
): Promise<void> {
  await waitFor(async () => (await collection.estimatedDocumentCount()) >= expected, {
    timeoutMs: 120_000,
    intervalMs: 20,
    what: `the store to reach ${expected} items`,
  });
}

interface BaselineDocument {
  _id: string;
}

/** CPU seconds (user + system) a process has used so far; Linux clock ticks are 1/100 s. */
function cpuSeconds(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU used by each named process while `work` runs: where the time goes. */
async function cpuDuring<T>(pids: Record<string, number | undefined>, work: () => Promise<T>) {
  const before = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]),
  );
  const result = await work();
  const cpu = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => [
      name,
      Math.round((cpuSeconds(pid) - (before[name] ?? 0)) * 10) / 10,
    ]),
  );
  return { result, cpu };
}

type BaselineShape = 'thin' | 'same_docs';

/** The documents a baseline inserts for one batch. */
function baselineDocuments(shape: BaselineShape, batch: ReturnType<typeof buildBatch>) {
  if (shape === 'same_docs') {
    return toDocuments({
      received_at: new Date().toISOString(),
      request: batch as AddRequest,
    }).map(({ claims: _claims, ...doc }) => ({ ...doc, ...searchFields(doc) }));
  }
  return batch.content.data.map((item) => ({
    _id: `${batch.device_name}|${item.file_path}|${item.timestamp}`,
    ...item,
    timestamp: new Date(item.timestamp),
  }));
}

/** Items per second of a baseline: publish with confirms, a minimal consumer inserts. */
async function baseline(
  rabbitmqUrl: string,
  collection: Collection<BaselineDocument>,
  shape: BaselineShape,
  device: string,
): Promise<number> {
  const connection = await amqp.connect(rabbitmqUrl);
  const publishChannel = await connection.createConfirmChannel();
  const queue = `bench.baseline.${device}`;
  await publishChannel.assertQueue(queue, {
    durable: true,
    arguments: { 'x-queue-type': 'quorum' },
  });
  const consumeChannel = await connection.createChannel();
  await consumeChannel.prefetch(32);
  await consumeChannel.consume(queue, (message) => {
    if (!message) return;
    const batch = JSON.parse(message.content.toString()) as ReturnType<typeof buildBatch>;
    collection.insertMany(baselineDocuments(shape, batch), { ordered: false }).then(
      () => consumeChannel.ack(message),
      () => consumeChannel.nack(message),
    );
  });
  const bodies = Array.from({ length: BATCHES }, (_, i) =>
    Buffer.from(JSON.stringify(buildBatch(device, i * ITEMS, ITEMS))),
  );
  const before = await collection.estimatedDocumentCount();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < BATCHES; i = next++) {
        publishChannel.publish('', queue, bodies[i]!, {
          persistent: true,
          contentType: 'application/json',
        });
        await publishChannel.waitForConfirms();
      }
    }),
  );
  await waitForCount(collection, before + BATCHES * ITEMS);
  const seconds = (performance.now() - started) / 1000;
  await publishChannel.deleteQueue(queue);
  await connection.close();
  return (BATCHES * ITEMS) / seconds;
}

const load = (url: string, device: string, rate = 0, token = TOKEN) =>
  runIngestLoad({
    url,
    token,
    device,
    batches: BATCHES,
    items: ITEMS,
    concurrency: CONCURRENCY,
    rate,
  });

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const round = (n: number, places = 2) => Math.round(n * 10 ** places) / 10 ** places;

async function main(): Promise<void> {
  const services = await startTestServices(log);
  const client = await MongoClient.connect(services.mongodbUrl);
  const processes: ServiceProcess[] = [];
  try {
    const thinDb = client.db('bench_thin');
    const sameDb = client.db('bench_same_docs');
    const oursDb = client.db('bench_ours');
    await Promise.all([thinDb, sameDb, oursDb].map((db) => db.dropDatabase()));
    // The same-documents baseline's collection gets the store's own indexes.
    const indexed = createMongoContentStore({
      url: services.mongodbUrl,
      database: 'bench_same_docs',
    });
    await indexed.ensureIndexes();
    await indexed.close();
    const broker = Number((await run('pgrep', ['-o', 'beam.smp'])).stdout.trim());
    const ferretdb = services.env.TEST_FERRETDB_PIDFILE
      ? Number(readFileSync(services.env.TEST_FERRETDB_PIDFILE, 'utf8'))
      : undefined;
    const shared = { rabbitmq: broker, ferretdb };

    const env = {
      RABBITMQ_URL: services.rabbitmqUrl,
      MONGODB_URL: services.mongodbUrl,
      MONGODB_DATABASE: 'bench_ours',
      LOG_LEVEL: 'warn',
    };
    const worker = startService('ingest-worker', {
      ...env,
      LOG_LEVEL: 'info',
      INGEST_OPS_PORT: '0',
    });
    processes.push(worker);
    await worker.waitForLog(/consuming content batches/);
    const port = 30_000 + Math.floor(Math.random() * 20_000);
    /** A gateway on `gatewayPort` with `settings` beside what every gateway here shares. */
    const startGateway = (gatewayPort: number, settings: Record<string, string>) => {
      const started = startService('gateway', {
        ...env,
        LOG_LEVEL: 'info',
        GATEWAY_PORT: String(gatewayPort),
        GATEWAY_OPS_PORT: '0',
        ...settings,
      });
      processes.push(started);
      return started;
    };
    const gateway = startGateway(port, {
      GATEWAY_TOKENS: JSON.stringify([
        { id: 'bench', token: TOKEN, scopes: ['ingest'] },
        { id: 'bench-admin', token: ADMIN, scopes: ['tokens:admin'] },
      ]),
    });
    await gateway.waitForLog(/gateway listening/);
    const url = `http://127.0.0.1:${port}`;
    const items = oursDb.collection('content_items');

    const runs: Array<{
      thin: number;
      same_docs: number;
      ours: number;
      cpu_s: Record<string, Record<string, number>>;
      latencies: number[];
    }> = [];
    for (let i = 0; i < RUNS; i++) {
      const thin = await cpuDuring({ ...shared, baseline_process: process.pid }, () =>
        baseline(services.rabbitmqUrl, thinDb.collection('content_items'), 'thin', `thin-${i}`),
      );
      const same = await cpuDuring({ ...shared, baseline_process: process.pid }, () =>
        baseline(
          services.rabbitmqUrl,
          sameDb.collection('content_items'),
          'same_docs',
          `same-${i}`,
        ),
      );
      const before = await items.estimatedDocumentCount();
      const started = performance.now();
      const ours = await cpuDuring(
        { ...shared, gateway: gateway.child.pid, worker: worker.child.pid },
        async () => {
          const report = await load(url, `ours-${i}`);
          await waitForCount(items, before + BATCHES * ITEMS);
          return report;
        },
      );
      const oursPerS = (BATCHES * ITEMS) / ((performance.now() - started) / 1000);
      runs.push({
        thin: thin.result,
        same_docs: same.result,
        ours: oursPerS,
        cpu_s: { thin: thin.cpu, same_docs: same.cpu, ours: ours.cpu },
        latencies: ours.result.latencies,
      });
      log(
        `run ${i + 1}: ours ${Math.round(oursPerS)} items/s, thin ${Math.round(thin.result)}, same documents ${Math.round(same.result)}`,
      );
    }

    // Half of the maximum load, paced, for the latency target.
    const itemsPerS = median(runs.map((r) => r.ours));
    const halfRate = itemsPerS / ITEMS / 2;
    const before = await items.estimatedDocumentCount();
    const half = await load(url, 'ours-half', halfRate);
    await waitForCount(items, before + BATCHES * ITEMS);

    // Authentication's cost at half load, between two gateways started now (the same history):
    // one that checks nothing per request (tokenless loopback clients, no rate limits) and one
    // doing what production does (a stored token from its cache, the default rate limits).
    // Alternated, and in turn first (ABBA...): the store slows as it grows, so whichever went
    // second would pay for it. The gateways' CPU per request is the direct measure; latencies
    // show whether a client can tell.
    const openPort = port + 1;
    const open = startGateway(openPort, {
      GATEWAY_CONNECTION_NAME: 'gateway-open',
      GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK: 'true',
    });
    const checkedPort = port + 2;
    const checking = startGateway(checkedPort, {
      GATEWAY_CONNECTION_NAME: 'gateway-checking',
      // Configured tokens as production has them (and no local token written into ./data).
      GATEWAY_TOKENS: JSON.stringify([{ id: 'bench', token: TOKEN, scopes: ['ingest'] }]),
      ...DEFAULT_LIMITS,
    });
    await Promise.all([open, checking].map((p) => p.waitForLog(/gateway listening/)));
    const stored = await storedToken(url, `http://127.0.0.1:${checkedPort}`);
    type Side = 'checked' | 'unchecked';
    const auth: Array<Record<Side, number[]> & { cpu_ms_per_request: Record<Side, number> }> = [];
    const side = async (which: Side, i: number) => {
      const [target, pid, token] =
        which === 'checked'
          ? [`http://127.0.0.1:${checkedPort}`, checking.child.pid, stored]
          : [`http://127.0.0.1:${openPort}`, open.child.pid, ''];
      // Read here, not through cpuDuring (which rounds to 0.1 s): clock ticks are 10 ms.
      const before = cpuSeconds(pid);
      const result = await load(target, `${which}-${i}`, halfRate, token);
      return { latencies: result.latencies, cpuMs: ((cpuSeconds(pid) - before) * 1000) / BATCHES };
    };
    for (let i = 0; i < RUNS; i++) {
      const sofar = await items.estimatedDocumentCount();
      const order: Side[] = i % 2 === 0 ? ['unchecked', 'checked'] : ['checked', 'unchecked'];
      const first = await side(order[0]!, i);
      const second = await side(order[1]!, i);
      await waitForCount(items, sofar + 2 * BATCHES * ITEMS);
      const [checked, unchecked] = order[0] === 'checked' ? [first, second] : [second, first];
      auth.push({
        checked: checked.latencies,
        unchecked: unchecked.latencies,
        cpu_ms_per_request: { checked: round(checked.cpuMs), unchecked: round(unchecked.cpuMs) },
      });
      log(
        `auth run ${i + 1}: p99 stored token + limits ${round(percentiles(checked.latencies, [99]).p99 ?? NaN)} ms, unchecked ${round(percentiles(unchecked.latencies, [99]).p99 ?? NaN)} ms`,
      );
    }
    const p = (latencies: number[], q: 50 | 99) => percentiles(latencies, [q])[`p${q}`] ?? NaN;
    const authMedian = (which: Side, q: 50 | 99) => round(median(auth.map((r) => p(r[which], q))));

    const ferretPerItem = (phase: 'thin' | 'same_docs' | 'ours') =>
      median(runs.map((r) => ((r.cpu_s[phase]?.ferretdb ?? NaN) * 1000) / (BATCHES * ITEMS)));
    const result = {
      bench: 'ingest',
      batches: BATCHES,
      items_per_batch: ITEMS,
      concurrency: CONCURRENCY,
      runs: RUNS,
      items_per_s: Math.round(itemsPerS),
      baselines_items_per_s: {
        thin: Math.round(median(runs.map((r) => r.thin))),
        same_docs: Math.round(median(runs.map((r) => r.same_docs))),
      },
      ratio_to_thin: round(median(runs.map((r) => r.ours / r.thin))),
      ratio_to_same_docs: round(median(runs.map((r) => r.ours / r.same_docs))),
      runs_items_per_s: runs.map((r) => ({
        ours: Math.round(r.ours),
        thin: Math.round(r.thin),
        same_docs: Math.round(r.same_docs),
      })),
      ...(ferretdb && {
        ferretdb_cpu_ms_per_item: {
          thin: round(ferretPerItem('thin'), 3),
          same_docs: round(ferretPerItem('same_docs'), 3),
          ours: round(ferretPerItem('ours'), 3),
        },
        ferretdb_cpu_ratio_to_thin: round(ferretPerItem('ours') / ferretPerItem('thin')),
      }),
      latency_ms: percentiles(
        runs.flatMap((r) => r.latencies),
        [50, 95, 99],
      ),
      half_load: {
        batches_per_s: Math.round(halfRate * 10) / 10,
        latency_ms: percentiles(half.latencies, [50, 95, 99]),
      },
      // Medians over the alternated runs; the ratio is the added cost's (1 = none).
      half_load_auth: {
        stored_token_and_limits_ms: {
          p50: authMedian('checked', 50),
          p99: authMedian('checked', 99),
        },
        unchecked_ms: { p50: authMedian('unchecked', 50), p99: authMedian('unchecked', 99) },
        p99_ratio: round(median(auth.map((r) => p(r.checked, 99) / p(r.unchecked, 99)))),
        // The gateway process's CPU per POST /add (each with 100 items), medians.
        gateway_cpu_ms_per_request: {
          stored_token_and_limits: round(median(auth.map((r) => r.cpu_ms_per_request.checked))),
          unchecked: round(median(auth.map((r) => r.cpu_ms_per_request.unchecked))),
        },
        runs_p99_ms: auth.map((r) => ({
          stored_token_and_limits: round(p(r.checked, 99)),
          unchecked: round(p(r.unchecked, 99)),
        })),
      },
      rss_mb: { gateway: peakRssMb(gateway.child.pid), worker: peakRssMb(worker.child.pid) },
      // CPU seconds per process over each phase of each run (2 cores here): where the time goes.
      cpu_s: runs.map((r) => r.cpu_s),
    };
    console.log(JSON.stringify(result));
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await client.close();
    await services.stop();
  }
}

/** A token made as an admin makes one (POST /tokens on `url`), once `holder` holds it. */
async function storedToken(url: string, holder: string): Promise<string> {
  const response = await fetch(`${url}/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ name: 'bench-desk', scopes: ['ingest'] }),
  });
  if (response.status !== 201) throw new Error(`POST /tokens answered ${response.status}`);
  const { secret } = (await response.json()) as { secret: string };
  await waitFor(
    async () =>
      (await fetch(`${holder}/auth/whoami`, { headers: { authorization: `Bearer ${secret}` } }))
        .status === 200,
    { timeoutMs: 10_000, intervalMs: 20, what: 'the stored token on the gateway' },
  );
  return secret;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

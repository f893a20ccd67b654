/**
 * bench:ingest — end-to-end ingest throughput and POST /add latency against a baseline measured
 * in the same run. Bounded: a fixed number of batches per phase and a 2-minute cap per phase;
 * all traffic goes to 127.0.0.1. Prints one JSON line last.
 *
 * Baseline: the same items published straight to RabbitMQ with confirms and inserted into the
 * store by a minimal consumer (no HTTP, no validation, no envelope).
 * Ours: gateway + ingest worker as separate processes, load from a third process.
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
import { buildBatch } from '../test/support/content';
import { startService, type ServiceProcess } from '../test/support/processes';
import { startTestServices } from '../test/services/start';
import { peakRssMb, runIngestLoad } from './load-runner';
import { percentiles } from './stats';

const BATCHES = Number(process.env.BENCH_BATCHES ?? 200);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const TOKEN = 'bench-token-0123456789abcdef';
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

async function baseline(
  rabbitmqUrl: string,
  collection: Collection<BaselineDocument>,
): Promise<number> {
  const connection = await amqp.connect(rabbitmqUrl);
  const publishChannel = await connection.createConfirmChannel();
  const queue = 'bench.baseline';
  await publishChannel.assertQueue(queue, {
    durable: true,
    arguments: { 'x-queue-type': 'quorum' },
  });
  const consumeChannel = await connection.createChannel();
  await consumeChannel.prefetch(32);
  await consumeChannel.consume(queue, (message) => {
    if (!message) return;
    const batch = JSON.parse(message.content.toString()) as ReturnType<typeof buildBatch>;
    // Variant BENCH_BASELINE_DOCS=stored: the documents our worker stores (more fields), to
    // separate the cost of the stored shape from the cost of the pipeline.
    const docs: BaselineDocument[] =
      process.env.BENCH_BASELINE_DOCS === 'stored'
        ? toDocuments({ received_at: new Date().toISOString(), request: batch as AddRequest })
        : batch.content.data.map((item) => ({
            _id: `${batch.device_name}|${item.file_path}|${item.timestamp}`,
            ...item,
            timestamp: new Date(item.timestamp),
          }));
    collection.insertMany(docs, { ordered: false }).then(
      () => consumeChannel.ack(message),
      () => consumeChannel.nack(message),
    );
  });
  const bodies = Array.from({ length: BATCHES }, (_, i) =>
    Buffer.from(JSON.stringify(buildBatch('baseline', i * ITEMS, ITEMS))),
  );
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
  await waitForCount(collection, BATCHES * ITEMS);
  const seconds = (performance.now() - started) / 1000;
  await publishChannel.deleteQueue(queue);
  await connection.close();
  return (BATCHES * ITEMS) / seconds;
}

const load = (url: string, device: string, rate = 0) =>
  runIngestLoad({
    url,
    token: TOKEN,
    device,
    batches: BATCHES,
    items: ITEMS,
    concurrency: CONCURRENCY,
    rate,
  });

async function main(): Promise<void> {
  const services = await startTestServices(log);
  const client = await MongoClient.connect(services.mongodbUrl);
  const processes: ServiceProcess[] = [];
  try {
    const baselineDb = client.db('bench_baseline');
    const oursDb = client.db('bench_ours');
    await Promise.all([baselineDb.dropDatabase(), oursDb.dropDatabase()]);
    if (process.env.BENCH_BASELINE_INDEXES === '1') {
      // Variant: the baseline's collection gets the store's indexes, to separate their cost
      // from the pipeline's.
      const store = createMongoContentStore({
        url: services.mongodbUrl,
        database: 'bench_baseline',
      });
      await store.ensureIndexes();
      await store.close();
    }
    const broker = Number((await run('pgrep', ['-o', 'beam.smp'])).stdout.trim());
    const ferretdb = services.env.TEST_FERRETDB_PIDFILE
      ? Number(readFileSync(services.env.TEST_FERRETDB_PIDFILE, 'utf8'))
      : undefined;
    const shared = { rabbitmq: broker, ferretdb };
    const { result: baselineItemsPerS, cpu: baselineCpu } = await cpuDuring(
      { ...shared, baseline_process: process.pid },
      () =>
        baseline(services.rabbitmqUrl, baselineDb.collection<BaselineDocument>('content_items')),
    );
    log(`baseline: ${Math.round(baselineItemsPerS)} items/s`);

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
    const gateway = startService('gateway', {
      ...env,
      LOG_LEVEL: 'info',
      GATEWAY_PORT: String(port),
      GATEWAY_OPS_PORT: '0',
      GATEWAY_TOKENS: JSON.stringify([{ id: 'bench', token: TOKEN, scopes: ['ingest'] }]),
    });
    processes.push(gateway);
    await gateway.waitForLog(/gateway listening/);
    const url = `http://127.0.0.1:${port}`;
    const items = oursDb.collection('content_items');

    const started = performance.now();
    const { result: full, cpu: oursCpu } = await cpuDuring(
      { ...shared, gateway: gateway.child.pid, worker: worker.child.pid },
      async () => {
        const report = await load(url, 'ours-full');
        await waitForCount(items, BATCHES * ITEMS);
        return report;
      },
    );
    const itemsPerS = (BATCHES * ITEMS) / ((performance.now() - started) / 1000);
    log(`ours at full load: ${Math.round(itemsPerS)} items/s`);

    // Half of the maximum load, paced, for the latency target.
    const halfRate = itemsPerS / ITEMS / 2;
    const half = await load(url, 'ours-half', halfRate);
    await waitForCount(items, 2 * BATCHES * ITEMS);

    const result = {
      batches: BATCHES,
      items_per_batch: ITEMS,
      concurrency: CONCURRENCY,
      items_per_s: Math.round(itemsPerS),
      baseline_items_per_s: Math.round(baselineItemsPerS),
      ratio: Math.round((itemsPerS / baselineItemsPerS) * 100) / 100,
      latency_ms: percentiles(full.latencies, [50, 95, 99]),
      half_load: {
        batches_per_s: Math.round(halfRate * 10) / 10,
        latency_ms: percentiles(half.latencies, [50, 95, 99]),
      },
      rss_mb: { gateway: peakRssMb(gateway.child.pid), worker: peakRssMb(worker.child.pid) },
      // CPU seconds per process over each full-load phase (2 cores here): where the time goes.
      cpu_s: { baseline: baselineCpu, ours: oursCpu },
    };
    console.log(JSON.stringify(result));
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await client.close();
    await services.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

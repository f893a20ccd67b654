import { existsSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { createAmqpBus } from '@screenfleet/bus';
import { createEnvelope, queueNames, topology, type ArchiveReply } from '@screenfleet/contracts';
import { createLogger } from '@screenfleet/runtime';
import {
  createMongoArchiveStateStore,
  createMongoContentStore,
  createS3ArchiveStore,
  type ContentDocument,
} from '@screenfleet/storage';
import type { S3Service, TestServices } from '../test/services/start';
import { archiveKeyring, createArchiver } from '@screenfleet/archive-worker';
import { startService } from '../test/support/processes';
import { insertDataSet } from './archive-data';
import { percentiles } from './stats';

export interface OursOptions {
  mongoUrl: string;
  database: string;
  s3: S3Service;
  bucket: string;
  prefix: string;
  chunkSize: number;
  retentionDays: number;
  encryptionKey: Buffer | undefined;
}

/** The archive worker's pass with the real stores: items moved and the pass's seconds. */
export async function runOurs(
  options: OursOptions,
): Promise<{ moved: number; seconds: number; profile: Record<string, object> } | null> {
  const content = createMongoContentStore({ url: options.mongoUrl, database: options.database });
  const state = createMongoArchiveStateStore({
    url: options.mongoUrl,
    database: options.database,
  });
  const archive = createS3ArchiveStore({
    endpoint: options.s3.endpoint,
    region: options.s3.region,
    forcePathStyle: options.s3.forcePathStyle,
    credentials: { accessKeyId: options.s3.accessKey, secretAccessKey: options.s3.secretKey },
    bucket: options.bucket,
    prefix: options.prefix,
  });
  try {
    await archive.ensureReady();
    const profile = new Map<string, { calls: number; ms: number }>();
    const timedState = timed(state, 'state', profile);
    const archiver = createArchiver({
      content: timed(content, 'content', profile),
      archive: timed(archive, 'archive', profile),
      state: timedState,
      chunkSize: options.chunkSize,
      // As the worker's loop does: the lease is renewed before each chunk.
      mayContinue: () => timedState.acquireLease('bench-worker', 60_000, new Date()),
      defaults: { enabled: true, retention_days: options.retentionDays, storage_limit: 2 ** 50 },
      ...(options.encryptionKey ? { keyring: archiveKeyring([options.encryptionKey]) } : {}),
    });
    const started = performance.now();
    const report = await archiver.runPass();
    const seconds = (performance.now() - started) / 1000;
    if (report.outcome !== 'done') {
      throw new Error(`the pass ended ${report.outcome}: ${report.error ?? ''}`);
    }
    return {
      moved: report.items,
      seconds,
      profile: Object.fromEntries(
        [...profile].map(([name, t]) => [name, { calls: t.calls, ms: Math.round(t.ms) }]),
      ),
    };
  } finally {
    await Promise.all([content.close(), state.close(), archive.close()]);
  }
}

export interface StatusRpcOptions {
  services: TestServices;
  bucket: string;
  calls: number;
  concurrency: number;
  /** Callers stop starting calls after this long: a slow status must not hold the bench. */
  maxSeconds: number;
  database: string;
  /** Stored before the calls (nothing archived: the worker runs with the archive disabled). */
  docs: ContentDocument[];
}

export interface StatusRpcResult {
  content_items: number;
  /** Calls made: fewer than asked when maxSeconds ran out. */
  calls: number;
  concurrency: number;
  calls_per_s: number;
  latency_ms: Record<string, number>;
}

/**
 * The floor: the same calls through RabbitMQ to an echo handler on a queue of the bench's own,
 * served with the worker's prefetch (1 unless it says otherwise): what the broker and the bus
 * cost before the worker does anything.
 */
export async function measureRpcFloor(
  options: Pick<StatusRpcOptions, 'services' | 'calls' | 'concurrency' | 'maxSeconds'>,
): Promise<StatusRpcResult> {
  const queue = `bench.rpc-floor.${Date.now().toString(36)}`;
  const benchTopology = {
    ...topology,
    queues: [...topology.queues, { name: queue, arguments: { 'x-queue-type': 'classic' } }],
  };
  const bus = await createAmqpBus({
    url: options.services.rabbitmqUrl,
    topology: benchTopology,
    connectionName: 'bench-archive-rpc-floor',
    logger: createLogger({ service: 'bench', level: 'silent' }),
  });
  try {
    await bus.serve(queue, (request) =>
      Promise.resolve(
        createEnvelope('archive.reply', request.payload, {
          correlationId: request.correlation_id,
        }),
      ),
    );
    const call = () =>
      bus.call(queue, createEnvelope('archive.command', { action: 'status' }), {
        timeoutMs: 10_000,
      });
    return { content_items: 0, ...(await timeCalls(call, options)) };
  } finally {
    await bus.close();
  }
}

/** `calls` calls from `concurrency` callers (after a warm-up), until maxSeconds run out. */
async function timeCalls(
  call: () => Promise<unknown>,
  options: Pick<StatusRpcOptions, 'calls' | 'concurrency' | 'maxSeconds'>,
): Promise<Omit<StatusRpcResult, 'content_items'>> {
  for (let i = 0; i < 20; i += 1) await call(); // warm up connections and caches
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const deadline = started + options.maxSeconds * 1000;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      for (let i = next++; i < options.calls && performance.now() < deadline; i = next++) {
        const sent = performance.now();
        await call();
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    calls: latencies.length,
    concurrency: options.concurrency,
    calls_per_s: Math.round(latencies.length / seconds),
    latency_ms: percentiles(latencies, [50, 95, 99]),
  };
}

const workerMain = path.resolve(__dirname, '../services/archive-worker/dist/main.js');

/**
 * GET /archive/status's path minus HTTP: `calls` status commands from `concurrency` callers
 * through the real RabbitMQ archive.rpc to a real archive worker process, over a content store
 * holding `docs`. Null when the worker's main is not built on this branch.
 */
export async function measureStatusRpc(options: StatusRpcOptions): Promise<StatusRpcResult | null> {
  if (!existsSync(workerMain)) return null;
  const { services } = options;
  await insertDataSet(services.mongodbUrl, options.database, options.docs);
  const worker = startService('archive-worker', {
    RABBITMQ_URL: services.rabbitmqUrl,
    MONGODB_URL: services.mongodbUrl,
    MONGODB_DATABASE: options.database,
    ARCHIVE_OPS_PORT: '0',
    ARCHIVE_ENABLED: 'false',
    ARCHIVE_STORE: 's3',
    S3_ENDPOINT: services.s3.endpoint,
    S3_REGION: services.s3.region,
    S3_BUCKET: options.bucket,
    S3_PREFIX: 'bench-rpc',
    S3_ACCESS_KEY: services.s3.accessKey,
    S3_SECRET_KEY: services.s3.secretKey,
    S3_FORCE_PATH_STYLE: String(services.s3.forcePathStyle),
    LOG_LEVEL: 'info',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  });
  const bus = await createAmqpBus({
    url: services.rabbitmqUrl,
    topology,
    connectionName: 'bench-archive-rpc',
    logger: createLogger({ service: 'bench', level: 'silent' }),
  });
  try {
    await worker.waitForLog(/archive worker started/, 60_000);
    const status = async () => {
      const reply = await bus.call<ArchiveReply>(
        queueNames.archiveRpc,
        createEnvelope('archive.command', { action: 'status' }),
        { timeoutMs: 10_000 },
      );
      if (reply.payload.outcome !== 'ok') {
        throw new Error(`status refused: ${JSON.stringify(reply.payload)}`);
      }
    };
    return { content_items: options.docs.length, ...(await timeCalls(status, options)) };
  } finally {
    await bus.close();
    await worker.stop();
    const client = await MongoClient.connect(services.mongodbUrl);
    await client.db(options.database).dropDatabase();
    await client.close();
  }
}

/**
 * The same object with each method's time summed under "<name>.<method>" (for async iterables,
 * the time of each step), to show where a pass spends its time.
 */
function timed<T extends object>(
  target: T,
  name: string,
  profile: Map<string, { calls: number; ms: number }>,
): T {
  const add = (method: string, ms: number) => {
    const entry = profile.get(`${name}.${method}`) ?? { calls: 0, ms: 0 };
    entry.calls += 1;
    entry.ms += ms;
    profile.set(`${name}.${method}`, entry);
  };
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      const method = String(property);
      return (...args: unknown[]) => {
        const started = performance.now();
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(object, args);
        if (result instanceof Promise) {
          return result.finally(() => add(method, performance.now() - started));
        }
        if (result && typeof result === 'object' && Symbol.asyncIterator in result) {
          const iterator = (result as AsyncIterable<unknown>)[Symbol.asyncIterator]();
          return {
            [Symbol.asyncIterator]: () => ({
              next: async () => {
                const stepStarted = performance.now();
                try {
                  return await iterator.next();
                } finally {
                  add(method, performance.now() - stepStarted);
                }
              },
              return: async () => iterator.return?.() ?? { done: true, value: undefined },
            }),
          };
        }
        return result;
      };
    },
  });
}

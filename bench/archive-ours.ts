import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
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
  /** Rounds the calls are split into, each target in turn (timeInterleaved). */
  rounds: number;
}

export interface StatusRpcResult {
  content_items: number;
  /** Calls made: fewer than asked when maxSeconds ran out. */
  calls: number;
  concurrency: number;
  calls_per_s: number;
  latency_ms: Record<string, number>;
}

/** An RPC to time: one call, and how to end what answers it. */
export interface RpcTarget {
  /** Content items in the store behind it (0 for an echo). */
  contentItems: number;
  call: () => Promise<unknown>;
  stop: () => Promise<void>;
}

/** The archive worker's RPC_PREFETCH: archive.rpc requests it handles at once. */
const WORKER_PREFETCH = 8;

const silent = createLogger({ service: 'bench', level: 'silent' });

/** archive.rpc's queue arguments: the floor's queue is of the same type (classic, quorum). */
const rpcQueueArguments =
  topology.queues.find((queue) => queue.name === queueNames.archiveRpc)?.arguments ?? {};

const floorTopology = (queue: string, queueArguments: Record<string, unknown>) => ({
  ...topology,
  queues: [...topology.queues, { name: queue, arguments: queueArguments }],
});

/**
 * The floor status is held to: an echo handler on a queue of the bench's own, of archive.rpc's
 * type, answering the same calls through the same RabbitMQ. `process`: served as the worker
 * serves archive.rpc (its own process, its prefetch), what the broker and the bus cost before the
 * worker does anything.
 * `in-process`: the floor as bench:archive measured it before (in the bench's process beside
 * the callers, one request at a time, a classic queue), kept to compare with earlier figures.
 */
export async function startEcho(
  services: TestServices,
  where: 'process' | 'in-process',
): Promise<RpcTarget> {
  const queue = `bench.rpc-floor.${where}.${Date.now().toString(36)}`;
  const queueTopology = floorTopology(
    queue,
    where === 'process' ? rpcQueueArguments : { 'x-queue-type': 'classic' },
  );
  let stopServer: () => Promise<void>;
  if (where === 'process') {
    const echo = spawn(
      process.execPath,
      [
        require.resolve('tsx/cli'),
        '--tsconfig',
        path.resolve(__dirname, '../tsconfig.check.json'),
        path.join(__dirname, 'archive-echo.ts'),
        services.rabbitmqUrl,
        queue,
        String(WORKER_PREFETCH),
        JSON.stringify(rpcQueueArguments),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<void>((resolve) => echo.once('exit', () => resolve()));
    stopServer = async () => {
      echo.kill('SIGTERM');
      await exited;
    };
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the echo server did not start')), 60_000);
      echo.once('exit', (code) => reject(new Error(`the echo server exited (${code})`)));
      readline.createInterface({ input: echo.stdout }).on('line', (line) => {
        if (line !== 'ready') return;
        clearTimeout(timer);
        resolve();
      });
    }).catch(async (error: unknown) => {
      await stopServer();
      throw error;
    });
  } else {
    const server = await createAmqpBus({
      url: services.rabbitmqUrl,
      topology: queueTopology,
      connectionName: 'bench-archive-rpc-floor-local',
      logger: silent,
    });
    await server.serve(queue, (request) =>
      Promise.resolve(
        createEnvelope('archive.reply', request.payload, {
          correlationId: request.correlation_id,
        }),
      ),
    );
    stopServer = () => server.close();
  }
  const bus = await createAmqpBus({
    url: services.rabbitmqUrl,
    topology: queueTopology,
    connectionName: 'bench-archive-rpc-floor',
    logger: silent,
  });
  return {
    contentItems: 0,
    call: () =>
      bus.call(queue, createEnvelope('archive.command', { action: 'status' }), {
        timeoutMs: 10_000,
      }),
    async stop() {
      await bus.close();
      await stopServer();
    },
  };
}

const workerMain = path.resolve(__dirname, '../services/archive-worker/dist/main.js');

/**
 * GET /archive/status's path minus HTTP: status commands through the real RabbitMQ archive.rpc to
 * a real archive worker process, over a content store holding `docs` (nothing archived: the
 * worker runs with the archive disabled). Null when the worker's main is not built on this branch.
 */
export async function startStatusWorker(options: {
  services: TestServices;
  bucket: string;
  database: string;
  docs: ContentDocument[];
}): Promise<RpcTarget | null> {
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
  const stop = async () => {
    await worker.stop();
    const client = await MongoClient.connect(services.mongodbUrl);
    await client.db(options.database).dropDatabase();
    await client.close();
  };
  try {
    await worker.waitForLog(/archive worker started/, 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  const bus = await createAmqpBus({
    url: services.rabbitmqUrl,
    topology,
    connectionName: 'bench-archive-rpc',
    logger: silent,
  });
  return {
    contentItems: options.docs.length,
    async call() {
      const reply = await bus.call<ArchiveReply>(
        queueNames.archiveRpc,
        createEnvelope('archive.command', { action: 'status' }),
        { timeoutMs: 10_000 },
      );
      if (reply.payload.outcome !== 'ok') {
        throw new Error(`status refused: ${JSON.stringify(reply.payload)}`);
      }
    },
    async stop() {
      await bus.close();
      await stop();
    },
  };
}

/**
 * `calls` calls to each target from `concurrency` callers, after a warm-up, split into `rounds`
 * rounds that take the targets in turn: whatever else loads the machine meanwhile weighs on each
 * target alike, so their figures compare within the run. A target's calls stop once they have
 * taken maxSeconds in all.
 */
export async function timeInterleaved<K extends string>(
  targets: Record<K, RpcTarget>,
  options: Pick<StatusRpcOptions, 'calls' | 'concurrency' | 'maxSeconds' | 'rounds'>,
): Promise<Record<K, StatusRpcResult>> {
  const names = Object.keys(targets) as K[];
  const samples = new Map(names.map((name) => [name, { latencies: [] as number[], ms: 0 }]));
  for (const name of names) {
    for (let i = 0; i < 20; i += 1) await targets[name].call(); // warm up connections and caches
  }
  for (let round = 0; round < options.rounds; round += 1) {
    const until = Math.round(((round + 1) * options.calls) / options.rounds);
    for (const name of names) {
      const sample = samples.get(name)!;
      const budget = options.maxSeconds * 1000 - sample.ms;
      if (budget <= 0) continue;
      const started = performance.now();
      const deadline = started + budget;
      await Promise.all(
        Array.from({ length: options.concurrency }, async () => {
          while (sample.latencies.length < until && performance.now() < deadline) {
            // Counted when sent, so the round makes `until` calls however many callers share it.
            sample.latencies.push(NaN);
            const index = sample.latencies.length - 1;
            const sent = performance.now();
            await targets[name].call();
            sample.latencies[index] = performance.now() - sent;
          }
        }),
      );
      sample.ms += performance.now() - started;
    }
  }
  return Object.fromEntries(
    names.map((name) => {
      const { latencies, ms } = samples.get(name)!;
      return [
        name,
        {
          content_items: targets[name].contentItems,
          calls: latencies.length,
          concurrency: options.concurrency,
          calls_per_s: Math.round((latencies.length / ms) * 1000),
          latency_ms: percentiles(latencies, [50, 95, 99]),
        },
      ];
    }),
  ) as Record<K, StatusRpcResult>;
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

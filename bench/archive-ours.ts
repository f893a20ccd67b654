import {
  createMongoArchiveStateStore,
  createMongoContentStore,
  createS3ArchiveStore,
  type ContentDocument,
} from '@screenfleet/storage';
import type { S3Service, TestServices } from '../test/services/start';
import { createArchiver } from '../services/archive-worker/src/domain/archive-pass';

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
    const archiver = createArchiver({
      content: timed(content, 'content', profile),
      archive: timed(archive, 'archive', profile),
      state: timed(state, 'state', profile),
      chunkSize: options.chunkSize,
      defaults: { enabled: true, retention_days: options.retentionDays, storage_limit: 2 ** 50 },
      ...(options.encryptionKey ? { encryptionKey: options.encryptionKey } : {}),
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
  calls: number;
  concurrency: number;
  database: string;
  docs: ContentDocument[];
}

/** Status RPC latency through archive.rpc to the real worker; null until the worker is here. */
export function measureStatusRpc(
  _options: StatusRpcOptions,
): Promise<Record<string, number> | null> {
  return Promise.resolve(null);
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

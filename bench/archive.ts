/**
 * bench:archive — items archived per second by the archive worker's pass, against a baseline in
 * the same run, and the status RPC's latency under concurrent calls. Bounded: a fixed data set
 * (BENCH_ARCHIVE_ITEMS old items to move, BENCH_ARCHIVE_RECENT newer ones that must stay) per
 * phase, a fixed number of RPC calls; everything on 127.0.0.1. Prints one JSON line last.
 *
 * Each run inserts the identical data set into a fresh database for each phase, then times
 * - baseline: read the same range in the same chunk size, write the same gzipped (and, with
 *   BENCH_ARCHIVE_ENCRYPT=1, AES-256-GCM) objects to the same bucket under another prefix and
 *   delete the items; no verification, no state (archive-baseline.ts);
 * - ours: the archive worker's pass with the real stores (archive-ours.ts).
 * Phase order alternates between runs; the medians of BENCH_ARCHIVE_RUNS runs are reported.
 *
 * Default 5,000 items, not 20,000: FerretDB v1 (the test server) pushes down neither range
 * filters nor `$in` deletes, so every chunk query and delete reads the whole collection and a
 * pass is quadratic in its size (2,000 items: ~8 s a phase here, 20,000: ~13 min). Both phases
 * pay that alike; on MongoDB the indexes make it linear. BENCH_ARCHIVE_ITEMS=20000 for the full
 * size. Status latency: BENCH_ARCHIVE_RPC_CALLS (10,000) status calls from
 * BENCH_ARCHIVE_RPC_CONCURRENCY (8) callers, at most BENCH_ARCHIVE_RPC_SECONDS (60), to a worker
 * over a store holding the recent items, in BENCH_ARCHIVE_RPC_ROUNDS (10) rounds taking turns
 * with the same calls to a bare echo handler through the same broker, served as the worker
 * serves (own process, prefetch 8, a queue of archive.rpc's type): the floor, `rpc_floor_echo`,
 * and `status_vs_echo` gives status's p50 and p99 over the floor's (aim: p99 <= 2).
 * `rpc_floor_echo_in_process` is the floor as measured before (echo in the bench's process,
 * prefetch 1, a classic queue), timed in the same turns; then status over an empty store.
 * BENCH_ARCHIVE_RUNS=0 skips the pass phases (status only).
 */
import { randomBytes } from 'node:crypto';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { MongoClient } from 'mongodb';
import type { ContentDocument } from '@screenfleet/storage';
import { startTestServices, type S3Service } from '../test/services/start';
import { runBaseline } from './archive-baseline';
import { buildDataSet, insertDataSet, type DataSetOptions } from './archive-data';
import {
  runOurs,
  startEcho,
  startStatusWorker,
  timeInterleaved,
  type RpcTarget,
  type StatusRpcResult,
} from './archive-ours';
import { median } from './stats';

const DATA: DataSetOptions = {
  items: Number(process.env.BENCH_ARCHIVE_ITEMS ?? 5_000),
  recent: Number(process.env.BENCH_ARCHIVE_RECENT ?? 1_000),
  devices: Number(process.env.BENCH_ARCHIVE_DEVICES ?? 4),
  retentionDays: 30,
};
const RUNS = Number(process.env.BENCH_ARCHIVE_RUNS ?? 3);
const CHUNK = Number(process.env.BENCH_ARCHIVE_CHUNK ?? 500);
const ENCRYPT = process.env.BENCH_ARCHIVE_ENCRYPT === '1';
// Enough for status to span several of the worker's state refreshes (one per ~0.8 s) and
// pending counts (one per second): at 2,000 its calls took under a second.
const RPC_CALLS = Number(process.env.BENCH_ARCHIVE_RPC_CALLS ?? 10_000);
const RPC_CONCURRENCY = Number(process.env.BENCH_ARCHIVE_RPC_CONCURRENCY ?? 8);
const RPC_MAX_SECONDS = Number(process.env.BENCH_ARCHIVE_RPC_SECONDS ?? 60);
const RPC_ROUNDS = Number(process.env.BENCH_ARCHIVE_RPC_ROUNDS ?? 10);
const DAY_MS = 86_400_000;

function log(message: string): void {
  process.stderr.write(`[bench:archive] ${message}\n`);
}

function s3Client(s3: S3Service): S3Client {
  return new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: s3.forcePathStyle,
    credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
  });
}

/** Counts (and with `remove`, deletes) the objects under a prefix. */
async function objectsUnder(
  s3: S3Client,
  bucket: string,
  prefix: string,
  remove = false,
): Promise<{ count: number; bytes: number }> {
  let count = 0;
  let bytes = 0;
  let ContinuationToken: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/`, ContinuationToken }),
    );
    const contents = page.Contents ?? [];
    count += contents.length;
    bytes += contents.reduce((sum, object) => sum + (object.Size ?? 0), 0);
    if (remove && contents.length > 0) {
      await s3.send(
        new DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: contents.map(({ Key }) => ({ Key: Key! })) },
        }),
      );
    }
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
  return { count, bytes };
}

/** What a phase left behind: nothing old, every recent item. Throws otherwise. */
async function checkMoved(url: string, database: string, cutoff: Date): Promise<void> {
  const client = await MongoClient.connect(url);
  try {
    const items = client.db(database).collection('content_items');
    const old = await items.countDocuments({ timestamp: { $lt: cutoff } });
    const total = await items.countDocuments({});
    if (old !== 0 || total !== DATA.recent) {
      throw new Error(
        `${database}: ${old} old items left, ${total} in all (want 0, ${DATA.recent})`,
      );
    }
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
}

interface PhaseResult {
  items_per_s: number;
  seconds: number;
  objects: number;
  bytes: number;
  profile?: Record<string, object>;
}

async function main(): Promise<void> {
  const services = await startTestServices(log);
  const s3 = s3Client(services.s3);
  const bucket = services.s3.bucket ?? `sf-bench-archive-${Date.now().toString(36)}`;
  if (!services.s3.bucket) await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const encryptionKey = ENCRYPT ? randomBytes(32) : undefined;
  const now = new Date();
  const docs = buildDataSet(DATA, now);
  const json = docs.reduce((sum, doc) => sum + JSON.stringify(doc).length, 0);
  log(`data set: ${docs.length} items (${DATA.items} to archive), ${Math.round(json / 1024)} KB`);
  const runs: Array<{ baseline: PhaseResult; ours: PhaseResult | null }> = [];
  try {
    for (let run = 0; run < RUNS; run += 1) {
      const phases =
        run % 2 === 0 ? (['ours', 'baseline'] as const) : (['baseline', 'ours'] as const);
      const results: Partial<Record<'ours' | 'baseline', PhaseResult | null>> = {};
      for (const phase of phases) {
        const database = `bench_archive_${phase}_${run}`;
        const prefix = `bench-${phase}-${run}-${Date.now().toString(36)}`;
        await insertDataSet(services.mongodbUrl, database, docs);
        const cutoff = new Date(Date.now() - DATA.retentionDays * DAY_MS);
        const outcome =
          phase === 'baseline'
            ? await runBaseline({
                mongoUrl: services.mongodbUrl,
                database,
                s3,
                bucket,
                prefix,
                cutoff,
                chunkSize: CHUNK,
                encryptionKey,
              })
            : await runOurs({
                mongoUrl: services.mongodbUrl,
                database,
                s3: services.s3,
                bucket,
                prefix,
                chunkSize: CHUNK,
                retentionDays: DATA.retentionDays,
                encryptionKey,
              });
        if (outcome === null) {
          results[phase] = null;
          continue;
        }
        const { moved, seconds } = outcome;
        if (moved !== DATA.items) throw new Error(`${phase} moved ${moved} of ${DATA.items} items`);
        await checkMoved(services.mongodbUrl, database, cutoff);
        const stored = await objectsUnder(s3, bucket, prefix, true);
        const result = {
          items_per_s: Math.round(moved / seconds),
          seconds: Math.round(seconds * 100) / 100,
          objects: stored.count,
          bytes: stored.bytes,
          // Ours: milliseconds per store method, to show where a pass spends its time.
          ...('profile' in outcome ? { profile: outcome.profile as Record<string, object> } : {}),
        };
        results[phase] = result;
        log(`run ${run} ${phase}: ${result.items_per_s} items/s (${seconds.toFixed(2)} s)`);
      }
      runs.push({ baseline: results.baseline!, ours: results.ours ?? null });
    }

    // Status over the store as a pass leaves it (the recent items) in turns with the floor (an
    // echo through the same broker) and with the floor as measured before; then status over an
    // empty store: the difference is what answering costs beyond the RPC path itself.
    const timing = {
      calls: RPC_CALLS,
      concurrency: RPC_CONCURRENCY,
      maxSeconds: RPC_MAX_SECONDS,
      rounds: RPC_ROUNDS,
    };
    const statusOver = (database: string, held: ContentDocument[]) => () =>
      startStatusWorker({ services, bucket, database, docs: held });
    const rpcs = await measureRpcs(
      {
        status: statusOver('bench_archive_rpc', docs.slice(DATA.items)),
        echo: () => startEcho(services, 'process'),
        echo_in_process: () => startEcho(services, 'in-process'),
      },
      timing,
    );
    const rpcsEmpty = await measureRpcs(
      { status: statusOver('bench_archive_rpc_empty', []) },
      timing,
    );
    const rpc = rpcs.status ?? null;
    const rpcFloor = rpcs.echo!;

    const baselineRate = runs.length > 0 ? median(runs.map((r) => r.baseline.items_per_s)) : null;
    const ours = runs.map((r) => r.ours).filter((r): r is PhaseResult => r !== null);
    const oursRate = ours.length > 0 ? median(ours.map((r) => r.items_per_s)) : null;
    console.log(
      JSON.stringify({
        items: DATA.items,
        recent_items_kept: DATA.recent,
        devices: DATA.devices,
        chunk_size: CHUNK,
        encrypted: ENCRYPT,
        runs: RUNS,
        items_per_s: oursRate,
        baseline_items_per_s: baselineRate,
        ratio:
          oursRate === null || baselineRate === null
            ? null
            : Math.round((oursRate / baselineRate) * 100) / 100,
        per_run: runs,
        status_rpc: rpc,
        status_rpc_empty_store: rpcsEmpty.status ?? null,
        rpc_floor_echo: rpcFloor,
        rpc_floor_echo_in_process: rpcs.echo_in_process!,
        // The aim: status p99 <= 2x the echo's, both measured in this run.
        status_vs_echo: rpc && {
          p50: ratioOf(rpc.latency_ms.p50, rpcFloor.latency_ms.p50),
          p99: ratioOf(rpc.latency_ms.p99, rpcFloor.latency_ms.p99),
        },
      }),
    );
  } finally {
    s3.destroy();
    await services.stop();
  }
}

/** Starts the targets, times them in turns and stops them; one not built here is left out. */
async function measureRpcs(
  starts: Record<string, () => Promise<RpcTarget | null>>,
  timing: Parameters<typeof timeInterleaved>[1],
): Promise<Record<string, StatusRpcResult | undefined>> {
  const targets: Record<string, RpcTarget> = {};
  try {
    for (const [name, start] of Object.entries(starts)) {
      const target = await start();
      if (target) targets[name] = target;
    }
    return await timeInterleaved(targets, timing);
  } finally {
    for (const target of Object.values(targets)) await target.stop();
  }
}

function ratioOf(value: number | undefined, floor: number | undefined): number | null {
  if (value === undefined || floor === undefined || floor <= 0) return null;
  return Math.round((value / floor) * 100) / 100;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

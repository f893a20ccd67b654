/**
 * bench:devices — GET /devices latency at fleet size, over HTTP beside the same read run
 * directly on the store (ContentStore.deviceCounters), so the ratio is what HTTP, the bus, the
 * records and the statuses add. Bounded in requests and time; traffic only to 127.0.0.1; temp
 * directories, the vhost and FerretDB removed at the end. Progress on stderr, one JSON line last.
 *
 * Embedded: BENCH_DEVICES_DEVICES (1,000) devices x BENCH_DEVICES_PER_DEVICE (1,000) items = 1M
 * items written through the content store as the server writes them (1,000 per insert, counters
 * in the same transaction), spread evenly over the 30 days before now (so every device has
 * buckets in the last 24 h, the windows' worst case), then `npm start`'s launcher on that file.
 * Built every run (the windows are relative to now, so a cached file would age); the build is
 * bounded (BENCH_DEVICES_BUILD_MAX_S, 600 s).
 * Distributed: gateway and ingest worker processes on a vhost of the local RabbitMQ and a
 * FerretDB of this run, with BENCH_DEVICES_FERRET_DEVICES (100) devices x
 * BENCH_DEVICES_FERRET_PER_DEVICE (100) items, sent as captures send them (batches of one
 * device within one hour); BENCH_DEVICES_DISTRIBUTED=0 skips it.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createSqliteContentStore,
  openSqliteDatabase,
  type ContentDocument,
  type ContentStore,
} from '@screenfleet/storage';
import { startLauncher } from '../test/support/system';
import { startDistributedStack } from './distributed-stack';
import { percentiles } from './stats';

const DEVICES = Number(process.env.BENCH_DEVICES_DEVICES ?? 1000);
const PER_DEVICE = Number(process.env.BENCH_DEVICES_PER_DEVICE ?? 1000);
const SAMPLES = Number(process.env.BENCH_DEVICES_SAMPLES ?? 200);
const BUILD_MAX_S = Number(process.env.BENCH_DEVICES_BUILD_MAX_S ?? 600);
const DISTRIBUTED = process.env.BENCH_DEVICES_DISTRIBUTED !== '0';
const FERRET_DEVICES = Number(process.env.BENCH_DEVICES_FERRET_DEVICES ?? 100);
const FERRET_PER_DEVICE = Number(process.env.BENCH_DEVICES_FERRET_PER_DEVICE ?? 100);
const FERRET_SAMPLES = Number(process.env.BENCH_DEVICES_FERRET_SAMPLES ?? 30);
const TOKEN = 'bench-token-0123456789abcdef';
const TOKENS = JSON.stringify([{ id: 'bench', token: TOKEN, scopes: ['search', 'ingest'] }]);
const SPAN_MS = 30 * 24 * 3_600_000;
const AIM_P95_MS = 20;

function log(message: string): void {
  process.stderr.write(`[bench:devices] ${message}\n`);
}

const deviceName = (d: number) => `desk-${String(d).padStart(4, '0')}`;

/** Item `slot` of device `d`: slots spread evenly over the span, every tenth a transcription. */
function item(d: number, slot: number, perDevice: number, now: number): ContentDocument {
  const at = new Date(now - SPAN_MS + Math.floor(((slot + (d % 97) / 97) * SPAN_MS) / perDevice));
  const transcription = slot % 10 === 9;
  return {
    _id: `bench-${d}-${slot}`,
    device_name: deviceName(d),
    content_type: transcription ? 'transcription' : 'frames',
    timestamp: at,
    timestamp_source: 'client',
    received_at: at,
    file_path: transcription ? null : `/captures/${deviceName(d)}/${slot}.mp4`,
    app_name: 'Code',
    window_name: 'main.ts',
    ocr_results: transcription
      ? []
      : [
          {
            text: `frame ${slot}`,
            confidence: null,
            text_json: null,
            ocr_engine: null,
            focused: null,
          },
        ],
    tags: [],
    transcription: transcription ? { text: `said ${slot}`, engine: null } : null,
  };
}

/** One slot of every device per insert (1,000 items), a few inserts in flight. */
async function buildEmbedded(store: ContentStore, now: number): Promise<void> {
  const deadline = performance.now() + BUILD_MAX_S * 1000;
  const inFlight = new Set<Promise<unknown>>();
  for (let slot = 0; slot < PER_DEVICE; slot++) {
    if (performance.now() > deadline) throw new Error(`the build took over ${BUILD_MAX_S} s`);
    for (let first = 0; first < DEVICES; first += 1000) {
      const docs = [];
      for (let d = first; d < Math.min(DEVICES, first + 1000); d++) {
        docs.push(item(d, slot, PER_DEVICE, now));
      }
      const insert = store.insertItems(docs);
      inFlight.add(insert);
      void insert.finally(() => inFlight.delete(insert)).catch(() => undefined);
      if (inFlight.size >= 4) await Promise.race(inFlight);
    }
    if (slot % 100 === 99) log(`  ${(slot + 1) * DEVICES} items`);
  }
  await Promise.all(inFlight);
}

async function timedGet(url: string): Promise<{ ms: number; total: number }> {
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  const body = (await response.json()) as { pagination?: { total: number }; device_name?: string };
  const ms = performance.now() - started;
  // GET /health answers 500 (unhealthy) when the newest frame is older than CAPTURE_STALL_AFTER:
  // as valid an answer as 200, from the same reads.
  const answered = response.status === 200 || (url.endsWith('/health') && response.status === 500);
  if (!answered) throw new Error(`GET ${url} ${response.status}: ${JSON.stringify(body)}`);
  return { ms, total: body.pagination?.total ?? 1 };
}

/** p50/p95 of each route, requests one at a time, store reads alternating with the list's. */
async function measure(base: string, store: ContentStore, samples: number, devices: number) {
  const routes = {
    list_default_50: `${base}/devices`,
    list_1000: `${base}/devices?limit=1000`,
    list_sorted_filtered: `${base}/devices?sort=last_item_time&status=stalled`,
    one_device_with_timeline: `${base}/devices/${deviceName(Math.floor(devices / 2))}`,
    health: `${base}/health`,
  };
  const figures: Record<string, Record<string, number>> = {};
  for (const [name, url] of Object.entries(routes)) {
    for (let i = 0; i < 20; i++) await timedGet(url); // warm (JIT, connections)
    const ms: number[] = [];
    for (let i = 0; i < samples; i++) {
      const { ms: took, total } = await timedGet(url);
      if (name === 'list_default_50' && total !== devices) {
        throw new Error(`GET /devices counted ${total} devices, expected ${devices}`);
      }
      ms.push(took);
    }
    figures[name] = percentiles(ms, [50, 95]);
    log(`${name}: ${JSON.stringify(figures[name])}`);
  }
  const storeMs: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await store.deviceCounters({ now: new Date() });
    storeMs.push(performance.now() - started);
  }
  const storeFigures = percentiles(storeMs, [50, 95]);
  log(`store deviceCounters (all devices): ${JSON.stringify(storeFigures)}`);
  return { http_ms: figures, store_all_devices_ms: storeFigures };
}

async function embedded(dir: string) {
  const now = Date.now();
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  const file = path.join(dataDir, 'screenfleet.db');
  let database = await openSqliteDatabase(file);
  let store = createSqliteContentStore({ database });
  await store.ensureIndexes();
  const started = performance.now();
  log(`building ${DEVICES} devices x ${PER_DEVICE} items`);
  await buildEmbedded(store, now);
  const buildS = Math.round((performance.now() - started) / 100) / 10;
  log(`built in ${buildS} s`);
  await store.close();
  await database.close();
  const launcher = startLauncher({
    DATA_DIR: dataDir,
    GATEWAY_PORT: '0',
    GATEWAY_OPS_PORT: '0',
    GATEWAY_TOKENS: TOKENS,
    LOG_LEVEL: 'warn',
  });
  database = await openSqliteDatabase(file);
  store = createSqliteContentStore({ database });
  try {
    const base = `http://127.0.0.1:${await launcher.apiPort}`;
    const figures = await measure(base, store, SAMPLES, DEVICES);
    return { devices: DEVICES, items: DEVICES * PER_DEVICE, build_s: buildS, ...figures };
  } finally {
    await launcher.stop('SIGINT');
    await store.close();
    await database.close();
  }
}

/** Batches as captures send them: one device's items within one hour (a few counter upserts). */
async function buildFerret(store: ContentStore, now: number): Promise<void> {
  const perBatch = 10;
  for (let d = 0; d < FERRET_DEVICES; d++) {
    for (let slot = 0; slot < FERRET_PER_DEVICE; slot += perBatch) {
      const docs = [];
      for (let s = slot; s < Math.min(FERRET_PER_DEVICE, slot + perBatch); s++) {
        // Each batch's items within one minute of its first slot's time.
        const doc = item(d, slot, FERRET_PER_DEVICE, now);
        docs.push({
          ...doc,
          _id: `bench-${d}-${s}`,
          timestamp: new Date(doc.timestamp.getTime() + s - slot),
        });
      }
      await store.insertItems(docs);
    }
    if (d % 20 === 19) log(`  ferret: ${(d + 1) * FERRET_PER_DEVICE} items`);
  }
}

async function distributed(dir: string) {
  const stack = await startDistributedStack('devices', dir, 'bench_devices');
  try {
    const started = performance.now();
    await buildFerret(stack.store, Date.now());
    const buildS = Math.round((performance.now() - started) / 100) / 10;
    log(`ferret: built in ${buildS} s`);
    const base = await stack.serve({ GATEWAY_TOKENS: TOKENS, GATEWAY_SEARCH_TIMEOUT: '60s' });
    const figures = await measure(base, stack.store, FERRET_SAMPLES, FERRET_DEVICES);
    return {
      devices: FERRET_DEVICES,
      items: FERRET_DEVICES * FERRET_PER_DEVICE,
      build_s: buildS,
      ...figures,
    };
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-bench-devices-'));
  try {
    const embeddedFigures = await embedded(dir);
    const distributedFigures = DISTRIBUTED ? await distributed(dir) : 'skipped';
    const p95 = embeddedFigures.http_ms.list_default_50?.p95 ?? NaN;
    const result = {
      bench: 'devices',
      embedded: embeddedFigures,
      distributed_ferretdb: distributedFigures,
      aims: {
        embedded_list_p95_ms: {
          aim: AIM_P95_MS,
          p95_ms: p95,
          devices: DEVICES,
          items: DEVICES * PER_DEVICE,
          met: DEVICES >= 1000 && DEVICES * PER_DEVICE >= 1_000_000 && p95 <= AIM_P95_MS,
        },
      },
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

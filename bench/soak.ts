/**
 * bench:soak — the distributed mode under steady load for a while (issue 38), counted as Jepsen
 * counts. `npm run bench:soak -- <minutes>` (30 by default). Prints one JSON line last.
 *
 * Processes (each a built main.js, as production runs them, on this run's test services: a
 * RabbitMQ vhost of its own, FerretDB, MinIO): two gateways, two ingest workers, the archive
 * worker (enabled, retention 1 day, a pass every 15 s, the S3 store) and an operator agent on a
 * real virtual desktop (Xvfb + AT-SPI + Chromium showing the test form: the desktop harness of
 * the operator tests). The gateways sign operator commands with a key made for the run; the agent
 * gets its public half.
 *
 * Load, all to 127.0.0.1, each kind bounded in requests per second (soak-traffic.ts `paced`):
 * - a probe first, for scale: PROBE_BATCHES batches of 45 two-day-old items as fast as
 *   PROBE_LANES senders get answers, timed until stored, then until the archive moved them out;
 * - then for <minutes>: RATE items/s (see there why a fixed rate) from DEVICES devices in
 *   batches of 45, 1 and 20 items alternating between the gateways (a non-200 is re-sent, the
 *   same bytes to the other gateway after Retry-After, up to ADD_ATTEMPTS times). The items'
 *   timestamps (soak-ledger.ts): a fifth two days old, three quarters turning a day old a minute
 *   after they are sent, the rest current; so the archive moves items all through the run
 *   while the content store stays small. GET /search (current and aging windows),
 *   GET /archive/status, listings and key presses on the desktop (a letter, then Backspace, each
 *   checked against the keydown the page saw) at the rates of RPS.
 * At the end: the ingest queue drained (rabbitmqctl: ready + unacknowledged); once the last items
 * sent are a day old, a pass asked for and awaited until nothing past the retention is left (the
 * current items stay); the archive disabled (nothing moves while the count runs); then every
 * item in the content store and in the archive (manifests -> chunks, checked as a restore checks
 * them) matched against what was sent (soak-ledger.ts): accepted, stored, lost, duplicated. `errors`: every answer but a 200, by request kind, status
 * and error code, and wrong answers. VmRSS of every process every 5 s; `minute_5` and `end` are
 * medians over RSS_WINDOW_MS (a run shorter than 10 minutes takes its baseline at half the run,
 * `rss_baseline_minute`); the broker is the machine's, shared with other runs.
 *
 * Ctrl-C (or SIGTERM) stops the run: the processes it started are stopped by their pids (SIGKILL
 * after 20 s), the desktop, the test services (vhost, FerretDB, MinIO) and the temp directory
 * removed, and a partial JSON line (`interrupted: true`) printed; exit 130.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import { queueNames } from '@screenfleet/contracts';
import { waitFor } from '@screenfleet/runtime';
import { createS3ArchiveStore } from '@screenfleet/storage';
import { archivedChunkReader } from '../services/archive-worker/src/domain/restore';
import {
  freeDisplayNumber,
  startDesktopHarness,
  type DesktopHarness,
} from '../services/operator-agent/test/support/desktop-harness';
import { PAGE_FIELDS } from '../services/operator-agent/test/support/test-page';
import { rabbitmqctl } from '../test/services/rabbitmqctl';
import { startTestServices, type TestServices } from '../test/services/start';
import { numberFields } from '../test/support/archive-status';
import { startService, type ServiceProcess } from '../test/support/processes';
import { FRESH_SHARE, Ledger, OLD_SHARE, type FoundItem, type SoakBatch } from './soak-ledger';
import { pidsWith, RssMeter } from './soak-rss';
import { paced, Traffic, type Answer } from './soak-traffic';

const MINUTES = Number(process.argv[2] ?? 30);
const DEVICES = 4;
/** Items per batch, in turn: screenpipe's clients send batches of 45 and of 1. */
const BATCH_SIZES = [45, 1, 20];
const MEAN_BATCH = BATCH_SIZES.reduce((sum, size) => sum + size, 0) / BATCH_SIZES.length;
/** Most items are a day old this long after they are sent (soak-ledger.ts): then archived. */
const AGING_MS = 60_000;
const DAY_MS = 86_400_000;
const PROBE_BATCHES = 60;
const PROBE_LANES = 4;
/**
 * Items per second the producers send. Fixed and conservative, not half the maximum: FerretDB
 * v1 (the test store) filters every read in Go after decoding the whole collection, so each
 * status count, search and archive chunk costs in proportion to what the store holds, and the
 * archive's rate falls with it (an archive chunk of 500: ~4 s at 3,000 items, ~40 s at 27,000).
 * At half the ingest maximum (~580 items/s) a first run held 80,000 items after a minute: every
 * status and search answered 503 and the archive moved ~12 items/s. At this rate the content
 * store stays at a few thousand items and the archive keeps up. BENCH_SOAK_ITEMS_PER_S sets
 * another (a MongoDB store takes far more).
 */
const RATE = Number(process.env.BENCH_SOAK_ITEMS_PER_S ?? 20);
/** Requests per second of the other kinds (listings: one per 20 s, the snapshot lasts 30 s). */
const RPS = { search: 0.1, status: 0.2, press: 1, list: 1 / 20 };
const ADD_ATTEMPTS = 4;
const ADD_LANE_IN_FLIGHT = 4;
const RSS_EVERY_MS = 5000;
const RSS_WINDOW_MS = 30_000;
const PROGRESS_EVERY_MS = 30_000;
const DRAIN_TIMEOUT_MS = 10 * 60_000;
const ARCHIVE_CATCH_UP_MS = 5 * 60_000;
const SEARCH_WORDS = ['invoice', 'deploy', 'customer', 'meeting', 'build'];
const TARGET_FIELD = PAGE_FIELDS[0];

const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const devices = Array.from({ length: DEVICES }, (_, i) => `soak-${runId}-dev-${i + 1}`);
const agentDevice = `soak-${runId}-desk`;
const tokens = {
  producer: `sf_soak_producer_${randomBytes(12).toString('hex')}`,
  reader: `sf_soak_reader_${randomBytes(12).toString('hex')}`,
  operator: `sf_soak_operator_${randomBytes(12).toString('hex')}`,
};
const tokenFor = (kind: string) =>
  kind === 'add'
    ? tokens.producer
    : kind.startsWith('list') || kind === 'press'
      ? tokens.operator
      : tokens.reader;

const log = (line: string) => process.stderr.write(`[bench:soak] ${line}\n`);
const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;

/** Stops a started process by its pid, SIGKILL when it is still there after 20 s. */
async function stopService(service: ServiceProcess): Promise<void> {
  const stopped = service.stop('SIGTERM');
  const late = await Promise.race([stopped.then(() => false), sleep(20_000).then(() => true)]);
  if (late) await service.stop('SIGKILL');
}

/** The vhost of a RabbitMQ URL (the first, when several nodes are listed). */
function vhostOf(url: string): string {
  const first = url.split(',')[0] ?? url;
  return decodeURIComponent(new URL(first).pathname.slice(1)) || '/';
}

/** Messages (ready and unacknowledged) per queue of the vhost, from the broker's own view. */
async function queueDepths(vhost: string): Promise<Record<string, number>> {
  const out = await rabbitmqctl([
    'list_queues',
    '-p',
    vhost,
    'name',
    'messages',
    '-q',
    '--no-table-headers',
  ]);
  return Object.fromEntries(
    out
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields.length === 2)
      .map(([name, messages]) => [name!, Number(messages)]),
  );
}

function pidFromFile(file: string | undefined): number | undefined {
  if (!file) return undefined;
  try {
    return Number(readFileSync(file, 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
}

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

async function main(): Promise<void> {
  if (!(MINUTES > 0)) throw new Error(`minutes must be a positive number, got ${process.argv[2]}`);
  const abort = new AbortController();
  let stopping = false;
  let firstSignal: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    // The terminal's Ctrl-C reaches the services too (one process group): their exit is no news.
    stopping = true;
    // tsx passes the terminal's signal on as well: one Ctrl-C can arrive twice.
    if (firstSignal === undefined) log(`${signal}: stopping the run, cleaning up`);
    else if (Date.now() - firstSignal > 2000)
      log('still cleaning up: the processes this run started are being stopped');
    firstSignal ??= Date.now();
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  /** Rejects once the run is stopped: every wait of the run races with it. */
  const stopped = new Promise<never>((_, reject) =>
    abort.signal.addEventListener('abort', () => reject(new Error('interrupted'))),
  );
  stopped.catch(() => undefined);
  const abortable = <T>(work: Promise<T>) => Promise.race([work, stopped]);

  const cleanups: Array<{ what: string; run: () => Promise<unknown> }> = [];
  const traffic = new Traffic(tokenFor, abort.signal);
  const ledger = new Ledger(AGING_MS);
  const exits: Record<string, string> = {};
  let loadMinutes = 0;
  try {
    // The AWS SDK's notice that its 2027 releases need Node 22 (known: shared/notes) is noise.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
    // Cleanups are registered before each start is awaited: a Ctrl-C meanwhile still ends it.
    const servicesStarting = startTestServices(log);
    cleanups.push({ what: 'the test services', run: async () => (await servicesStarting).stop() });
    const services: TestServices = await abortable(servicesStarting);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sf-soak-'));
    cleanups.push({
      what: 'the temp directory',
      run: async () => rmSync(dir, { recursive: true, force: true }),
    });
    const database = `soak_${runId}`;
    const bucket = services.s3.bucket ?? `sf-soak-${runId}`;
    const prefix = `soak-${runId}`;
    const archiveStore = () =>
      createS3ArchiveStore({
        endpoint: services.s3.endpoint,
        region: services.s3.region,
        forcePathStyle: services.s3.forcePathStyle,
        credentials: { accessKeyId: services.s3.accessKey, secretAccessKey: services.s3.secretKey },
        bucket,
        prefix,
      });
    // Our own FerretDB and MinIO go with their directories; given servers are tidied here.
    if (!services.env.TEST_FERRETDB_PIDFILE) {
      cleanups.push({
        what: `the database ${database}`,
        run: async () => {
          const client = await MongoClient.connect(services.mongodbUrl);
          await client.db(database).dropDatabase();
          await client.close();
        },
      });
    }
    if (!services.env.TEST_MINIO_PIDFILE) {
      cleanups.push({
        what: `the archive objects under ${bucket}/${prefix}`,
        run: async () => {
          const store = archiveStore();
          for await (const object of store.list('')) await store.delete(object.key);
          await store.close();
        },
      });
    }

    const keys = generateKeyPairSync('ed25519');
    const shared = {
      RABBITMQ_URL: services.rabbitmqUrl,
      MONGODB_URL: services.mongodbUrl,
      MONGODB_DATABASE: database,
      LOG_LEVEL: 'info',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    const processes: Record<string, ServiceProcess> = {};
    const start = (name: string, service: string, env: Record<string, string>) => {
      const started = startService(service, { ...shared, ...env });
      processes[name] = started;
      cleanups.push({ what: name, run: () => stopService(started) });
      started.child.once('exit', (code, signal) => {
        if (!stopping) {
          exits[name] = `exited ${code ?? signal} during the run`;
          log(`${name} ${exits[name]}`);
        }
      });
      return started;
    };

    for (const n of [1, 2]) {
      const worker = start(`ingest_worker_${n}`, 'ingest-worker', {
        INGEST_OPS_PORT: '0',
        INGEST_CONNECTION_NAME: `soak-ingest-${n}`,
      });
      await abortable(worker.waitForLog(/consuming content batches/, 60_000));
    }
    const archiver = start('archive_worker', 'archive-worker', {
      ARCHIVE_OPS_PORT: '0',
      ARCHIVE_ENABLED: 'true',
      ARCHIVE_RETENTION_DAYS: '1',
      ARCHIVE_INTERVAL: '15s',
      ARCHIVE_RETRY_INITIAL: '5s',
      ARCHIVE_RETRY_MAX: '60s',
      ARCHIVE_STORE: 's3',
      S3_ENDPOINT: services.s3.endpoint,
      S3_REGION: services.s3.region,
      S3_BUCKET: bucket,
      S3_PREFIX: prefix,
      S3_ACCESS_KEY: services.s3.accessKey,
      S3_SECRET_KEY: services.s3.secretKey,
      S3_FORCE_PATH_STYLE: String(services.s3.forcePathStyle),
    });
    await abortable(archiver.waitForLog(/archive worker started/, 60_000));

    const deskStarting = startDesktopHarness(freeDisplayNumber(150));
    cleanups.push({ what: 'the desktop', run: async () => (await deskStarting).stop() });
    const desk: DesktopHarness = await abortable(deskStarting);
    const agent = start('operator_agent', 'operator-agent', {
      DEVICE_NAME: agentDevice,
      DISPLAY: desk.env.DISPLAY,
      DBUS_SESSION_BUS_ADDRESS: desk.env.DBUS_SESSION_BUS_ADDRESS,
      OPERATOR_OPS_PORT: '0',
      OPERATOR_COMMAND_PUBLIC_KEY: keys.publicKey
        .export({ type: 'spki', format: 'pem' })
        .toString(),
    });
    await abortable(agent.waitForLog(/operator agent started/, 30_000));

    const gatewayTokens = JSON.stringify([
      { id: 'soak-producer', token: tokens.producer, scopes: ['ingest'], devices },
      {
        id: 'soak-reader',
        token: tokens.reader,
        scopes: ['search', 'archive:read', 'archive:write'],
      },
      { id: 'soak-operator', token: tokens.operator, scopes: ['operator'] },
    ]);
    const gateways: string[] = [];
    for (const n of [1, 2]) {
      const gateway = start(`gateway_${n}`, 'gateway', {
        GATEWAY_PORT: '0',
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_OPS_PORT: '0',
        GATEWAY_CONNECTION_NAME: `soak-gateway-${n}`,
        GATEWAY_TOKENS: gatewayTokens,
        GATEWAY_OPERATOR_SIGNING_KEY: keys.privateKey
          .export({ type: 'pkcs8', format: 'pem' })
          .toString(),
        DATA_DIR: path.join(dir, `gateway-${n}`),
      });
      const listening = await abortable(gateway.waitForLog(/gateway listening/, 60_000));
      gateways.push(`http://127.0.0.1:${Number(listening.port)}`);
    }
    const gatewayFor = (n: number) => gateways[n % gateways.length]!;
    const vhost = vhostOf(services.rabbitmqUrl);

    // Every process's pid, for its RSS; the broker is the machine's, shared with other runs.
    const chromiumProfile = path.join(path.dirname(desk.childEnv.HOME ?? ''), 'chromium-profile');
    let broker: number | undefined;
    try {
      broker = Number(execFileSync('pgrep', ['-o', 'beam.smp']).toString().trim()) || undefined;
    } catch {
      broker = undefined;
    }
    const meter = new RssMeter({
      ...Object.fromEntries(Object.entries(processes).map(([name, p]) => [name, p.child.pid])),
      ferretdb: pidFromFile(services.env.TEST_FERRETDB_PIDFILE),
      minio: pidFromFile(services.env.TEST_MINIO_PIDFILE),
      chromium: pidsWith(chromiumProfile).find((pid) => !cmdlineOf(pid).includes('--type=')),
      xvfb: pidsWith('Xvfb', `${desk.env.DISPLAY} -screen`)[0],
      ...(services.mode === 'local' && broker ? { rabbitmq_shared: broker } : {}),
    });

    // --- the requests ---------------------------------------------------------------------
    const retryDelay = (answer: Answer | undefined) =>
      Math.min(5000, 1000 * (Number(answer?.headers.get('retry-after')) || 1));

    /** One batch: a 200 accepts its items; a 5xx or no answer is re-sent, a 4xx is not. */
    const add = async (batch: SoakBatch, n: number): Promise<void> => {
      for (let attempt = 0; attempt < ADD_ATTEMPTS && !abort.signal.aborted; attempt += 1) {
        const answer = await traffic.call('add', `${gatewayFor(n + attempt)}/add`, {
          method: 'POST',
          body: batch.body,
        });
        if (answer?.status === 200) {
          ledger.settle(batch, true);
          return;
        }
        if (answer && answer.status < 500) break;
        await sleep(retryDelay(answer)).catch(() => undefined);
      }
      ledger.settle(batch, false);
    };

    let lastStatus: Record<string, unknown> = {};
    const status = async (n: number): Promise<Record<string, unknown> | undefined> => {
      const answer = await traffic.call('status', `${gatewayFor(n)}/archive/status`);
      if (answer?.status !== 200) return undefined;
      const wrong = numberFields.filter((field) => typeof answer.body[field] !== 'number');
      if (wrong.length > 0)
        traffic.error('status', `wrong answer: ${wrong.join(', ')} not numbers`);
      lastStatus = answer.body;
      return answer.body;
    };

    /** Searches answered with items and without: the device check above means something. */
    const searches = { found: 0, empty: 0 };
    const search = async (n: number): Promise<void> => {
      const device = devices[n % devices.length]!;
      // In turn the fresh items (the last 5 minutes) and the aging ones (a day back, until the
      // archive moves them).
      const end = n % 2 === 0 ? Date.now() : Date.now() - DAY_MS + AGING_MS;
      const query = new URLSearchParams({
        q: SEARCH_WORDS[n % SEARCH_WORDS.length]!,
        device_name: device,
        limit: '10',
        start_time: new Date(end - 5 * 60_000).toISOString(),
        end_time: new Date(end).toISOString(),
      });
      const answer = await traffic.call('search', `${gatewayFor(n)}/search?${query.toString()}`);
      if (answer?.status !== 200) return;
      const data = answer.body.data;
      const total = (answer.body.pagination as { total?: unknown } | undefined)?.total;
      if (!Array.isArray(data) || typeof total !== 'number') {
        traffic.error('search', 'wrong answer: no data array or total');
        return;
      }
      const foreign = (data as Array<{ content?: { device_name?: string } }>).some(
        (item) => item.content?.device_name !== device,
      );
      if (foreign) traffic.error('search', 'wrong answer: an item of another device');
      if (data.length > 0) searches.found += 1;
      else searches.empty += 1;
    };

    let target: number | undefined;
    const list = async (n: number, kind = 'list'): Promise<boolean> => {
      const answer = await traffic.call(
        kind,
        `${gatewayFor(n)}/experimental/operator/list-interactable-elements`,
        { method: 'POST', body: { device_name: agentDevice, app_name: 'Chromium' } },
      );
      if (answer?.status !== 200) return false;
      const elements = (answer.body.elements ?? []) as Array<{ index: number; text: string }>;
      const found = elements.find((element) => element.text === TARGET_FIELD.label);
      if (!found) {
        traffic.error(kind, `wrong answer: "${TARGET_FIELD.label}" not listed`);
        return false;
      }
      target = found.index;
      return true;
    };

    const presses = { landed: 0, elsewhere: 0, unseen: 0 };
    let lastSeq = 0;
    const press = async (n: number): Promise<void> => {
      if (target === undefined) return;
      // A letter, then Backspace: the field never grows.
      const letter = String.fromCharCode(97 + ((n >> 1) % 26));
      const [key, code]: [string, string] =
        n % 2 === 0 ? [letter, `Key${letter.toUpperCase()}`] : ['backspace', 'Backspace'];
      const after = lastSeq;
      const answer = await traffic.call(
        'press',
        `${gatewayFor(n)}/experimental/operator/press-key-by-index`,
        { method: 'POST', body: { device_name: agentDevice, element_index: target, key } },
      );
      if (answer?.status !== 200) return;
      const seen = await desk
        .waitForKeydown((report) => report.code === code && report.seq > after, 3000)
        .catch(() => undefined);
      if (!seen) {
        presses.unseen += 1;
        traffic.error('press', 'answered 200, the key never reached the page');
        return;
      }
      lastSeq = seen.seq;
      if (seen.activeId === TARGET_FIELD.id) presses.landed += 1;
      else {
        presses.elsewhere += 1;
        traffic.error('press', `the key landed on #${seen.activeId || '(body)'}`);
      }
    };

    // Chromium exposes the page a little after it loaded: list until the field is there (these
    // first listings are counted apart, as `list_warm_up`).
    await abortable(
      waitFor(() => list(0, 'list_warm_up'), {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: 'the form listed',
      }),
    );

    // --- the probe: the maximum the stores keep up with -------------------------------------
    const drain = async (timeoutMs: number) => {
      const started = performance.now();
      let depths: Record<string, number> = {};
      await abortable(
        waitFor(
          async () => {
            depths = await queueDepths(vhost);
            return depths[queueNames.ingestContent] === 0;
          },
          { timeoutMs, intervalMs: 2000, what: 'the ingest queue to drain' },
        ),
      );
      return { seconds: (performance.now() - started) / 1000, depths };
    };
    const client = await MongoClient.connect(services.mongodbUrl);
    cleanups.push({ what: 'the store client', run: () => client.close() });
    const items = client.db(database).collection<FoundItem>('content_items');
    /** Items past the retention still in the content store, counted now (no cached count). */
    const due = () => items.countDocuments({ timestamp: { $lt: new Date(Date.now() - DAY_MS) } });
    /** Asks for a pass and waits until nothing due is left and no pass runs. */
    const archiveCatchUp = async (timeoutMs: number) => {
      const started = performance.now();
      const before = await due();
      await traffic.call('run', `${gatewayFor(0)}/archive/run`, { method: 'POST', body: {} });
      const caughtUp = await abortable(
        waitFor(async () => (await due()) === 0 && (await status(0))?.is_uploading === false, {
          timeoutMs,
          intervalMs: 3000,
          what: 'the archive to catch up',
        }).then(
          () => true,
          (error: unknown) => {
            if (abort.signal.aborted) throw error;
            return false;
          },
        ),
      );
      return { caughtUp, items: before, seconds: (performance.now() - started) / 1000 };
    };

    // The probe, for scale: how fast the stores take a burst (all of it two days old), then how
    // fast the archive moves it out (every item passes through both).
    log(`probe: ${PROBE_BATCHES} batches of 45 items from ${PROBE_LANES} senders, then the drain`);
    const probeStarted = performance.now();
    const acceptedBefore = ledger.accepted();
    let probeNext = 0;
    await Promise.all(
      Array.from({ length: PROBE_LANES }, async (_, lane) => {
        for (let n = probeNext++; n < PROBE_BATCHES && !abort.signal.aborted; n = probeNext++)
          await add(ledger.batch(devices[lane % devices.length]!, 45, { old: true }), n);
      }),
    );
    const probeItems = ledger.accepted() - acceptedBefore;
    // Timed until the store holds them all (a cheap count, polled often: the store held nothing
    // before), then the queue checked empty too.
    await abortable(
      waitFor(async () => (await items.estimatedDocumentCount()) >= probeItems, {
        timeoutMs: DRAIN_TIMEOUT_MS,
        intervalMs: 100,
        what: `the store to hold the probe's ${probeItems} items`,
      }),
    );
    const probeSeconds = (performance.now() - probeStarted) / 1000;
    await drain(DRAIN_TIMEOUT_MS);
    const probeArchive = await archiveCatchUp(DRAIN_TIMEOUT_MS);
    const probe = {
      items: probeItems,
      ingest_items_per_s: Math.round(probeItems / probeSeconds),
      archive_items_per_s: Math.round(probeArchive.items / probeArchive.seconds),
      archive_caught_up: probeArchive.caughtUp,
    };
    const rate = RATE;
    log(`probe: ${JSON.stringify(probe)}; the soak runs at ${rate} items/s`);

    // --- the soak ----------------------------------------------------------------------------
    const loadStart = performance.now();
    const loadMs = MINUTES * 60_000;
    const since = () => performance.now() - loadStart;
    const running = () => !abort.signal.aborted && since() < loadMs;
    const acceptedAtStart = ledger.accepted();
    const batchesPerLane = rate / MEAN_BATCH / devices.length;
    meter.sample(0);
    const sampler = setInterval(() => meter.sample(since()), RSS_EVERY_MS);
    const progress = setInterval(() => {
      const accepted = ledger.accepted() - acceptedAtStart;
      log(
        `${round(since() / 60_000)} min: ${accepted} items accepted (${Math.round(accepted / (since() / 1000))}/s), ` +
          `archive pending ${String(lastStatus.pending_count)} chunks ${String(lastStatus.chunks_uploaded)}, ` +
          `presses landed ${presses.landed}, errors ${JSON.stringify(traffic.errors())}`,
      );
    }, PROGRESS_EVERY_MS);
    log(`soak: ${MINUTES} min at ${Math.round(rate)} items/s over ${devices.length} devices`);
    try {
      await Promise.all([
        ...devices.map((device, lane) =>
          paced(batchesPerLane, ADD_LANE_IN_FLIGHT, running, (n) =>
            add(ledger.batch(device, BATCH_SIZES[n % BATCH_SIZES.length]!), n + lane),
          ),
        ),
        paced(RPS.search, 2, running, search),
        paced(RPS.status, 2, running, async (n) => void (await status(n))),
        paced(RPS.list, 1, running, async (n) => void (await list(n))),
        paced(RPS.press, 1, running, press),
      ]);
    } finally {
      clearInterval(sampler);
      clearInterval(progress);
    }
    meter.sample(since());
    const loadEnd = since();
    const loadEndedAt = Date.now();
    loadMinutes = loadEnd / 60_000;
    if (abort.signal.aborted) throw new Error('interrupted');
    const acceptedInLoad = ledger.accepted() - acceptedAtStart;

    // --- the end: drain, let the archive finish what is due, hold it, count ----------------
    log('load over: waiting for the ingest queue to drain');
    const drained = await drain(DRAIN_TIMEOUT_MS);
    // The last items sent turn a day old AGING_MS after the load: then the archive moves them.
    const untilAged = loadEndedAt + AGING_MS + 1000 - Date.now();
    log(
      `drained in ${round(drained.seconds)} s; the archive catches up in ${round(untilAged / 1000)} s`,
    );
    if (untilAged > 0) await abortable(sleep(untilAged));
    const catchUp = await archiveCatchUp(ARCHIVE_CATCH_UP_MS);
    const dueAtEnd = await due();
    await traffic.call('configure', `${gatewayFor(1)}/archive/configure`, {
      method: 'POST',
      body: { enabled: false },
    });
    await abortable(
      waitFor(async () => (await status(1))?.is_uploading === false, {
        timeoutMs: 5 * 60_000,
        intervalMs: 1000,
        what: 'the archive pass to stop',
      }),
    );
    const finalStatus = lastStatus;

    log('counting the content store and the archive');
    const store = archiveStore();
    const unreadable: Array<{ key: string; reason: string }> = [];
    let chunks = 0;
    const tally = await (async () => {
      try {
        const inStore = items
          .find({}, { projection: { device_name: 1, file_path: 1, timestamp: 1 } })
          .batchSize(5000);
        const reader = archivedChunkReader({ archive: store }, unreadable);
        const archived = async function* () {
          for await (const chunk of reader.chunks({}, () => new Error('no task lease here'))) {
            chunks += 1;
            yield* chunk.docs;
          }
        };
        return await ledger.tally(inStore, archived());
      } finally {
        await store.close();
      }
    })();

    // --- the report ---------------------------------------------------------------------------
    const baselineMs = Math.min(5 * 60_000, loadEnd / 2);
    const minute5 = meter.medianOver(baselineMs, baselineMs + RSS_WINDOW_MS);
    const end = meter.medianOver(loadEnd - RSS_WINDOW_MS, loadEnd + 1);
    const rss = Object.fromEntries(
      Object.keys(minute5).map((name) => {
        const from = minute5[name] ?? null;
        const to = end[name] ?? null;
        return [
          name,
          {
            minute_5: from,
            end: to,
            growth_pct: from && to ? round(((to - from) / from) * 100) : null,
          },
        ];
      }),
    );
    const errors = traffic.errors();
    const result = {
      bench: 'soak',
      minutes: MINUTES,
      load_minutes: round(loadMinutes, 2),
      accepted: tally.accepted,
      stored: tally.stored,
      lost: tally.lost,
      duplicated: tally.duplicated,
      errors,
      errors_but_503: traffic.errorsBut503(),
      rss_mb: rss,
      rss_baseline_minute: round(baselineMs / 60_000, 2),
      rss_window_s: RSS_WINDOW_MS / 1000,
      rss_over_10pct: Object.entries(rss)
        .filter(([name, r]) => name !== 'rabbitmq_shared' && (r.growth_pct ?? 0) > 10)
        .map(([name]) => name),
      requests: traffic.summary(),
      counted: {
        ...tally,
        archive_chunks_read: chunks,
        archive_unreadable: unreadable.length,
        dead_letters: drained.depths[queueNames.ingestContentDead] ?? null,
      },
      load: {
        probe,
        fraction_of_ingest_max: round(rate / probe.ingest_items_per_s, 3),
        fraction_of_archive_max: round(rate / probe.archive_items_per_s, 3),
        target_items_per_s: Math.round(rate),
        soak_items_per_s: Math.round(acceptedInLoad / (loadEnd / 1000)),
        devices: devices.length,
        batch_items: BATCH_SIZES,
        items_share: {
          old: OLD_SHARE,
          aging: round(1 - OLD_SHARE - FRESH_SHARE, 2),
          fresh: FRESH_SHARE,
        },
        aging_s: AGING_MS / 1000,
        rps: { ...RPS, add: round(rate / MEAN_BATCH, 2) },
      },
      presses,
      searches,
      archive: {
        chunks_uploaded: finalStatus.chunks_uploaded ?? null,
        caught_up: catchUp.caughtUp,
        catch_up_s: round(catchUp.seconds),
        due_left_at_count: dueAtEnd,
        last_error: finalStatus.last_error ?? null,
      },
      drain_s: round(drained.seconds),
      process_exits: exits,
    };
    stopping = true;
    await runCleanups(cleanups);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    stopping = true;
    await runCleanups(cleanups);
    if (!abort.signal.aborted) throw error;
    process.stdout.write(
      `${JSON.stringify({
        bench: 'soak',
        interrupted: true,
        minutes: round(loadMinutes, 2),
        accepted_so_far: ledger.accepted(),
        errors: traffic.errors(),
        requests: traffic.summary(),
        process_exits: exits,
      })}\n`,
    );
    process.exit(130);
  }
}

async function runCleanups(cleanups: Array<{ what: string; run: () => Promise<unknown> }>) {
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop()!;
    await cleanup
      .run()
      .catch((error: unknown) => log(`cleaning up ${cleanup.what} failed: ${String(error)}`));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);

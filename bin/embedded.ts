/**
 * The embedded mode: every service in this one process, over the in-process bus and one SQLite
 * file, with a filesystem archive, behind the same HTTP API (ARCHITECTURE.md, "Embedded mode").
 * Nothing to install but Node: no broker, no database server, no Go.
 *
 * A 200 from POST /add still means durable: the in-process bus confirms a publish only once
 * the ingest worker committed the items to the SQLite file (libs/bus memory.bus.ts).
 */
import { hostname } from 'node:os';
import path from 'node:path';
import { loadSigningKey, loadVerifyKey, topology } from '@screenfleet/contracts';
import { createMemoryBus, type Bus } from '@screenfleet/bus';
import {
  archiveKeyring,
  createArchiveWorker,
  createLocalMediaFiles,
  createLocalMediaWriter,
  archiveConfigSpec,
  checkArchiveConfig,
  defaultArchiveDir,
  EMBEDDED_DATABASE_FILE,
  openArchiveStore,
  parseEncryptionKeys,
} from '@screenfleet/archive-worker';
import {
  createGateway,
  createGatewayMetrics,
  gatewayConfigSpec,
  localTokenBanner,
  resolveAuth,
} from '@screenfleet/gateway';
import { createIngestWorker, ingestConfigSpec } from '@screenfleet/ingest-worker';
import {
  createLinuxDesktop,
  createOperatorAgent,
  DesktopUnavailableError,
  unavailableDesktop,
  agentConfigSpec,
  type Desktop,
} from '@screenfleet/operator-agent';
import {
  createLogger,
  createMetrics,
  ensurePrivateDir,
  loadConfig,
  startOpsServer,
  type ConfigSpec,
  type Env,
  type Logger,
} from '@screenfleet/runtime';
import {
  createSqliteArchiveStateStore,
  createSqliteContentStore,
  createSqliteDeadLetters,
  openSqliteDatabase,
} from '@screenfleet/storage';
import { ensureOperatorKeys } from './operator-keys';

/** What the embedded mode does not read: the servers it replaces. */
const SERVER_VARS = ['rabbitmqUrl', 'mongodbUrl', 'database', 'connectionName'] as const;

function withoutServers<S extends ConfigSpec>(spec: S): Omit<S, (typeof SERVER_VARS)[number]> {
  const rest: Record<string, unknown> = { ...spec };
  for (const key of SERVER_VARS) delete rest[key];
  return rest as Omit<S, (typeof SERVER_VARS)[number]>;
}

export interface EmbeddedSystem {
  /** The API's port. */
  port: number;
  opsPort: number;
  dataDir: string;
  databaseFile: string;
  /** The archive directory, or the S3 bucket and prefix. */
  archive: string;
  /** The local token's file when no GATEWAY_TOKENS are set. */
  tokenFile: string | undefined;
  /** The device the operator agent of this desktop serves (DEVICE_NAME); none when unset. */
  agent: string | undefined;
  /**
   * Stops intake first, lets what was accepted finish, then closes the file; rejects naming the
   * steps that failed (every step still runs). Once only: a second call gets the same result.
   */
  stop(): Promise<void>;
}

export async function startEmbedded(env: Env, logger?: Logger): Promise<EmbeddedSystem> {
  const gatewayConfig = loadConfig(withoutServers(gatewayConfigSpec), env);
  const ingestConfig = loadConfig(withoutServers(ingestConfigSpec), env);
  const archiveConfig = loadConfig(withoutServers(archiveConfigSpec), env);
  checkArchiveConfig(archiveConfig);
  const log = logger ?? createLogger({ service: 'screenfleet', level: gatewayConfig.logLevel });
  const dataDir = path.resolve(gatewayConfig.dataDir);
  // Before anything is written in it: the SQLite file holds every captured screen's text.
  ensurePrivateDir(dataDir, 'data directory (DATA_DIR)');
  const registry = createMetrics();
  const stops: Array<{ name: string; run: () => Promise<void> }> = [];
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      const failed: string[] = [];
      for (const step of [...stops].reverse()) {
        await step.run().catch((error: unknown) => {
          log.error({ err: error }, `${step.name} failed`);
          failed.push(step.name);
        });
      }
      if (failed.length > 0) throw new Error(`stopping failed at: ${failed.join('; ')}`);
    })());

  try {
    const databaseFile = path.join(dataDir, EMBEDDED_DATABASE_FILE);
    // Writes go to the database's writer thread and reads to its reader connections, so a lock
    // held by another process (a second start on this data directory, a sqlite3 shell) holds
    // the writes waiting for it, not the event loop. A short wait still: the ingest worker
    // retries a busy store with backoff, well within the publish timeout.
    const database = await openSqliteDatabase(databaseFile, { busyTimeoutMs: 1000 });
    stops.push({ name: 'close the SQLite file', run: () => database.close() });
    const content = createSqliteContentStore({ database });
    const state = createSqliteArchiveStateStore({ database });
    const deadLetters = createSqliteDeadLetters({ database });
    const bus: Bus = createMemoryBus({
      topology,
      deadLetter: (queue, envelope, reason) => deadLetters.add(queue, envelope, reason),
      // A 200 waits for the commit. A batch no handler took in time gives a 503 (nothing
      // stored); one a handler holds is waited for, then a 500 outcome_unknown, never a hang.
      publishTimeoutMs: gatewayConfig.publishTimeout,
      outcomeTimeoutMs: gatewayConfig.outcomeTimeout,
      logger: log,
    });
    stops.push({ name: 'close the in-process bus', run: () => bus.close() });

    const ingest = createIngestWorker({
      bus,
      store: content,
      logger: log,
      registry,
      prefetch: ingestConfig.prefetch,
      maxBytesInFlight: ingestConfig.maxBytesInFlight,
      // No micro-batching here: the writer thread's group commit already puts whatever is
      // queued into one transaction, with no wait; INGEST_GROUP_* would only add latency.
      grouping: { maxWeight: 1, maxWaitMs: 0 },
      retry: { initialMs: ingestConfig.retryInitial, maxMs: ingestConfig.retryMax },
      searchPrefetch: ingestConfig.searchPrefetch,
      captureStallAfterMs: ingestConfig.captureStallAfter,
    });
    await ingest.start();
    stops.push({ name: 'finish the batches and searches in hand', run: () => ingest.stop() });

    // A directory under the data directory unless ARCHIVE_DIR or ARCHIVE_STORE=s3 says otherwise.
    const archiveDir = path.resolve(
      env.ARCHIVE_DIR ? archiveConfig.dir : defaultArchiveDir(dataDir),
    );
    const archive = openArchiveStore({ ...archiveConfig, dir: archiveDir });
    stops.push({ name: 'close the archive store', run: () => archive.close() });
    const archiveLocation =
      archiveConfig.store === 's3'
        ? `s3 bucket ${archiveConfig.s3Bucket}/${archiveConfig.s3Prefix}`
        : archiveDir;
    const archiveKeys = parseEncryptionKeys(archiveConfig);
    const archiver = createArchiveWorker({
      bus,
      content,
      archive,
      state,
      ...(archiveConfig.mediaRoot
        ? {
            media: createLocalMediaFiles(archiveConfig.mediaRoot),
            mediaWriter: createLocalMediaWriter(archiveConfig.mediaRoot),
          }
        : {}),
      keyring: archiveKeyring(archiveKeys),
      allowUnreadable: archiveConfig.allowUnreadable,
      defaults: {
        enabled: archiveConfig.enabled,
        retention_days: archiveConfig.retentionDays,
        storage_limit: archiveConfig.storageLimit,
      },
      chunkSize: archiveConfig.chunkSize,
      intervalMs: archiveConfig.interval,
      leaseTtlMs: archiveConfig.leaseTtl,
      retry: { initialMs: archiveConfig.retryInitial, maxMs: archiveConfig.retryMax },
      holderId: `embedded@${hostname()}:${process.pid}`,
      logger: log,
      registry,
    });
    await archiver.start();
    stops.push({ name: 'finish the archive chunk in hand', run: () => archiver.stop() });

    // Commands are signed even in one process: the agent code path is the same everywhere.
    const keys = ensureOperatorKeys(dataDir);
    const agent = env.DEVICE_NAME
      ? await startAgent(env, bus, keys.publicKey, log, registry)
      : undefined;
    if (agent) stops.push({ name: 'stop the operator agent', run: agent.stop });

    const { auth, localToken } = resolveAuth(gatewayConfig);
    const gateway = createGateway({
      bus,
      auth,
      metrics: createGatewayMetrics(registry),
      logger: log,
      operator: {
        timeoutMs: gatewayConfig.operatorTimeout,
        signingKey: loadSigningKey(env.GATEWAY_OPERATOR_SIGNING_KEY ?? keys.privateKey),
      },
      search: { timeoutMs: gatewayConfig.searchTimeout },
      devices: { stallAfterMs: gatewayConfig.captureStallAfter },
      archive: {
        timeoutMs: gatewayConfig.archiveTimeout,
        restoreTimeoutMs: gatewayConfig.archiveRestoreTimeout,
      },
    });
    const port = await gateway.listen(gatewayConfig.port, gatewayConfig.host);
    stops.push({ name: 'stop HTTP intake', run: () => gateway.close() });
    if (localToken?.created) process.stderr.write(localTokenBanner(localToken));

    const ops = await startOpsServer({
      port: gatewayConfig.opsPort,
      host: gatewayConfig.opsHost,
      metricsToken: gatewayConfig.metricsToken,
      registry,
      logger: log,
      readiness: () => ({
        ready: bus.isConnected(),
        checks: { bus: 'in-process', store: 'sqlite' },
      }),
    });
    stops.push({ name: 'close the ops server', run: () => ops.close() });

    return {
      port,
      opsPort: ops.port,
      dataDir,
      databaseFile,
      archive: archiveLocation,
      tokenFile: localToken?.file,
      agent: env.DEVICE_NAME,
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined); // the start's error is the one to report
    throw error;
  }
}

async function startAgent(
  env: Env,
  bus: Bus,
  publicKeyFile: string,
  logger: Logger,
  registry: ReturnType<typeof createMetrics>,
): Promise<{ stop: () => Promise<void> }> {
  const config = loadConfig(withoutServers(agentConfigSpec), {
    ...env,
    OPERATOR_COMMAND_PUBLIC_KEY: env.OPERATOR_COMMAND_PUBLIC_KEY ?? publicKeyFile,
  });
  let desktop: Desktop;
  try {
    desktop = await createLinuxDesktop({
      env: {
        DISPLAY: config.display,
        DBUS_SESSION_BUS_ADDRESS: config.dbusSessionBusAddress,
        XAUTHORITY: config.xauthority,
      },
    });
  } catch (error) {
    if (!(error instanceof DesktopUnavailableError)) throw error;
    logger.error({ reason: error.message }, 'desktop unavailable: every command will get 503');
    desktop = unavailableDesktop(error.message);
  }
  const agent = createOperatorAgent({
    bus,
    desktop,
    deviceName: config.deviceName,
    commandKey: loadVerifyKey(config.commandPublicKey),
    snapshotTtlMs: config.snapshotTtl,
    heartbeatMs: config.heartbeat,
    logger,
    registry,
  });
  await agent.start();
  return {
    stop: async () => {
      await agent.stop();
      await desktop.close();
    },
  };
}

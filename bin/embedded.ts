/**
 * The embedded mode: every service in this one process, over the in-process bus and one SQLite
 * file, with a filesystem archive, behind the same HTTP API (ARCHITECTURE.md, "Embedded mode").
 * Nothing to install but Node: no broker, no database server, no Go.
 *
 * A 200 from POST /add still means durable: the in-process bus confirms a publish only once
 * the ingest worker committed the items to the SQLite file (libs/bus memory.bus.ts).
 */
import path from 'node:path';
import { topology } from '@screenfleet/contracts';
import { createMemoryBus, type Bus } from '@screenfleet/bus';
import {
  archiveConfigSpec,
  archiveWorkerSettings,
  createArchiveWorker,
  openArchiveStore,
} from '@screenfleet/archive-worker';
import {
  announceAuth,
  createGateway,
  createGatewayMetrics,
  gatewayConfigSpec,
  gatewaySettings,
  resolveAuth,
} from '@screenfleet/gateway';
import {
  createIngestWorker,
  ingestConfigSpec,
  ingestWorkerSettings,
} from '@screenfleet/ingest-worker';
import {
  agentConfigSpec,
  createOperatorAgent,
  openDesktop,
  operatorAgentSettings,
} from '@screenfleet/operator-agent';
import {
  createLogger,
  createMetrics,
  defineConfig,
  ensurePrivateDir,
  loadConfig,
  startOpsServer,
  StopSteps,
  withoutServerVars,
  type Env,
  type Logger,
  type Registry,
} from '@screenfleet/runtime';
import {
  createSqliteArchiveStateStore,
  createSqliteContentStore,
  createSqliteDeadLetters,
  openSqliteDatabase,
} from '@screenfleet/storage';
import { embeddedDefaults } from './launch-defaults';
import { launcherConfigSpec } from './launcher-config';

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

/**
 * Starts the system on `env`, which holds the launcher's defaults (launch-defaults.ts). Each
 * service's config is read without its server variables and turned into its dependencies by the
 * service's own settings function, as its main.ts does; only the ports differ.
 */
export async function startEmbedded(env: Env, logger?: Logger): Promise<EmbeddedSystem> {
  const gatewayConfig = loadConfig(withoutServerVars(gatewayConfigSpec), env);
  const ingestConfig = loadConfig(withoutServerVars(ingestConfigSpec), env);
  const archiveConfig = loadConfig(withoutServerVars(archiveConfigSpec), env);
  const log = logger ?? createLogger({ service: 'screenfleet', level: gatewayConfig.logLevel });
  const archiveSettings = archiveWorkerSettings(archiveConfig, embeddedDefaults.archiveHolderName);
  const dataDir = path.resolve(gatewayConfig.dataDir);
  // Before anything is written in it: the SQLite file holds every captured screen's text.
  ensurePrivateDir(dataDir, 'data directory (DATA_DIR)');
  const registry = createMetrics();
  const steps = new StopSteps();
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      const failed: string[] = [];
      for (const step of steps.inStopOrder()) {
        await step.run().catch((error: unknown) => {
          log.error({ err: error }, `${step.name} failed`);
          failed.push(step.name);
        });
      }
      if (failed.length > 0) throw new Error(`stopping failed at: ${failed.join('; ')}`);
    })());

  try {
    const databaseFile = path.join(dataDir, embeddedDefaults.databaseFile);
    const database = await openSqliteDatabase(databaseFile, {
      busyTimeoutMs: embeddedDefaults.sqliteBusyTimeoutMs,
    });
    steps.add('close the SQLite file', () => database.close());
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
    steps.add('close the in-process bus', () => bus.close());

    const ingest = createIngestWorker({
      bus,
      store: content,
      logger: log,
      registry,
      ...ingestWorkerSettings(ingestConfig),
      grouping: embeddedDefaults.ingestGrouping,
    });
    await ingest.start();
    steps.add('finish the batches and searches in hand', () => ingest.stop());

    const archive = openArchiveStore(archiveConfig);
    steps.add('close the archive store', () => archive.close());
    const archiver = createArchiveWorker({
      bus,
      content,
      archive,
      state,
      logger: log,
      registry,
      ...archiveSettings,
    });
    await archiver.start();
    steps.add('finish the archive chunk in hand', () => archiver.stop());

    const agent = await startAgent(env, bus, log, registry);
    if (agent) steps.add('stop the operator agent', agent.stop);

    const authSetup = resolveAuth(gatewayConfig);
    const gateway = createGateway({
      bus,
      auth: authSetup.auth,
      metrics: createGatewayMetrics(registry),
      logger: log,
      ...gatewaySettings(gatewayConfig, log),
    });
    const port = await gateway.listen(gatewayConfig.port, gatewayConfig.host);
    steps.add('stop HTTP intake', () => gateway.close());
    announceAuth(authSetup, log);

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
    steps.add('close the ops server', () => ops.close());

    return {
      port,
      opsPort: ops.port,
      dataDir,
      databaseFile,
      archive:
        archiveConfig.store === 's3'
          ? `s3 bucket ${archiveConfig.s3Bucket}/${archiveConfig.s3Prefix}`
          : path.resolve(archiveConfig.dir),
      tokenFile: authSetup.localToken?.file,
      agent: agent?.device,
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined); // the start's error is the one to report
    throw error;
  }
}

/** Whether this desktop gets an agent: its other variables are read only when it does. */
const agentDeviceSpec = defineConfig({ deviceName: launcherConfigSpec.deviceName });

/** The operator agent of this desktop when DEVICE_NAME names one; none otherwise. */
async function startAgent(
  env: Env,
  bus: Bus,
  logger: Logger,
  registry: Registry,
): Promise<{ device: string; stop: () => Promise<void> } | undefined> {
  if (loadConfig(agentDeviceSpec, env).deviceName === undefined) return undefined;
  const config = loadConfig(withoutServerVars(agentConfigSpec), env);
  const settings = operatorAgentSettings(config);
  const { desktop } = await openDesktop(config, logger);
  const agent = createOperatorAgent({ bus, desktop, logger, registry, ...settings });
  await agent.start();
  return {
    device: config.deviceName,
    stop: async () => {
      await agent.stop();
      await desktop.close();
    },
  };
}

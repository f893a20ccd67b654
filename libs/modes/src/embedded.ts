/**
 * The embedded mode: every service in this one process over the in-process bus and one SQLite
 * file, with the archive store its config names, behind the same HTTP API (ARCHITECTURE.md,
 * "Local run"). Nothing to install but Node: no broker, no database server, no Go. The one place
 * that chooses these adapters, for `npm start` and the commands.
 *
 * A 200 from POST /add still means durable: the in-process bus confirms a publish only once
 * the ingest worker committed the items to the SQLite file (libs/bus memory.queue.ts settles
 * the publish's Confirm; ADR 0007).
 */
import path from 'node:path';
import { createEnvelope, exchangeNames, topology } from '@screenfleet/contracts';
import { createMemoryBus } from '@screenfleet/bus';
import {
  ensurePrivateDir,
  hostProcess,
  loadConfig,
  withoutServerVars,
  type ConfigSpec,
  type Env,
  type HostedConfig,
  type HostOptions,
} from '@screenfleet/runtime';
import type { SqliteDatabaseOptions } from '@screenfleet/storage';
import type { Service, ServicePorts, ServiceRunning } from './service';
import { checkpointPasses, registerSqliteMetrics } from './sqlite-metrics';
import { storageAdapters } from './storage-adapters';
import { watchTokensChanged } from './tokens-changed-file';

/** The SQLite file in the data directory (DATA_DIR), where the commands find it too. */
export const embeddedDatabaseFile = (dataDir: string) =>
  path.join(path.resolve(dataDir), 'screenfleet.db');

/**
 * Writes go to the database's writer thread and reads to its reader connections, so a lock
 * held by another process (a second start on this data directory, a sqlite3 shell) holds the
 * writes waiting for it, not the event loop. A short wait still: the ingest worker retries a
 * busy store with backoff, well within the publish timeout.
 */
const SQLITE_BUSY_TIMEOUT_MS = 1000;

/** The embedded mode's stores, all in one SQLite file. */
export async function openEmbeddedStores(
  file: string,
  options: Pick<SqliteDatabaseOptions, 'busyTimeoutMs' | 'checkpointer'> = {},
) {
  const storage = await storageAdapters();
  const database = await storage.openSqliteDatabase(file, options);
  return {
    database,
    content: storage.createSqliteContentStore({ database }),
    state: storage.createSqliteArchiveStateStore({ database }),
    deadLetters: storage.createSqliteDeadLetters({ database }),
    tokens: storage.createSqliteTokenStore({ database }),
    audit: storage.createSqliteAuditStore({ database }),
    // The stores on the shared database leave it open when closed: this closes it for all.
    close: () => database.close(),
  };
}

export interface EmbeddedOptions extends Pick<HostOptions, 'exit'> {
  /** Where every service reads its config (without its server variables). */
  env: Env;
  /** The process's ops server, log level and stop limit. */
  hosted: HostedConfig;
  dataDir: string;
  /**
   * A 200 waits for the commit. A batch no handler took in time gives a 503 (nothing stored);
   * one a handler holds is waited for, then a 500 outcome_unknown, never a hang.
   */
  publishTimeoutMs: number;
  outcomeTimeoutMs: number;
}

/** Starts one service in the embedded process; resolves with what its start returned. */
export type StartInProcess = <S extends ConfigSpec, R extends ServiceRunning>(
  service: Service<S, R>,
) => Promise<R>;

/**
 * Hosts the services `startServices` starts (with `start`, in its order) in this process, on
 * the ports of the embedded mode; `startServices` resolves with what to announce once the ops
 * server listens. Ctrl-C stops them in reverse order of start, then the bus, the file and the
 * ops server; a repeated Ctrl-C (npm relays it) does not cut that short.
 */
export function runEmbedded(
  options: EmbeddedOptions,
  startServices: (start: StartInProcess) => Promise<(ops: { port: number }) => void>,
): Promise<void> {
  return hostProcess(
    {
      name: 'screenfleet',
      config: options.hosted,
      repeatedSignal: 'ignore',
      ...(options.exit ? { exit: options.exit } : {}),
    },
    async (host) => {
      const dataDir = path.resolve(options.dataDir);
      // Before anything is written in it: the SQLite file holds every captured screen's text.
      ensurePrivateDir(dataDir, 'data directory (DATA_DIR)');
      const passes = checkpointPasses();
      const stores = await openEmbeddedStores(embeddedDatabaseFile(dataDir), {
        busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS,
        checkpointer: { onPass: passes.onPass },
      });
      host.onStop('close the SQLite file', () => stores.close());
      registerSqliteMetrics(host.registry, stores.database, passes);
      const bus = createMemoryBus({
        topology,
        deadLetter: (queue, envelope, reason) => stores.deadLetters.add(queue, envelope, reason),
        publishTimeoutMs: options.publishTimeoutMs,
        outcomeTimeoutMs: options.outcomeTimeoutMs,
        logger: host.logger,
      });
      host.onStop('close the in-process bus', () => bus.close());
      // `npm run tokens` wrote the file's tokens: the gateway loads them again (ADR 0019).
      const unwatch = watchTokensChanged(dataDir, () => {
        const changed = createEnvelope('tokens.changed', { reason: 'cli' });
        bus.publish(exchangeNames.tokensEvents, '', changed).catch((err: unknown) => {
          host.logger.warn({ err }, 'could not announce a change of the tokens');
        });
      });
      host.onStop('stop watching for token changes', () => Promise.resolve(unwatch()));
      const ports: ServicePorts = {
        // Starts the archive lease holder id (distributed: ARCHIVE_CONNECTION_NAME).
        identity: 'embedded',
        storeGroupsWrites: true,
        bus: () => Promise.resolve(bus),
        contentStore: () => Promise.resolve(stores.content),
        archiveStateStore: () => Promise.resolve(stores.state),
        tokenStore: () => Promise.resolve(stores.tokens),
        auditStore: () => Promise.resolve(stores.audit),
      };
      const announces: Array<(ops: { port: number }) => void> = [];
      const announce = await startServices(async (service) => {
        const config = loadConfig(withoutServerVars(service.spec), options.env);
        const running = await service.start({ ...host, config }, ports);
        if (running.announce) announces.push(running.announce);
        return running;
      });
      return {
        // One process serves everything: ready while its bus is open. The services' own checks
        // stay out: an agent whose desktop cannot be driven answers its commands 503 and must
        // not take the whole API down with it.
        readiness: () => ({
          ready: bus.isConnected(),
          checks: { bus: 'in-process', store: 'sqlite' },
        }),
        announce: (ops) => [...announces, announce].forEach((line) => line(ops)),
      };
    },
  );
}

import { MongoClient } from 'mongodb';

/** The slice of a logger the stores need; pino's Logger fits it. */
export interface StoreLogger {
  info(details: object, message?: string): void;
  warn(details: object, message?: string): void;
}

/** Logs transitions only (lost, back), not every failed heartbeat. */
export function watchConnection(
  client: MongoClient,
  logger: StoreLogger | undefined,
  storeName: string,
): void {
  if (!logger) return;
  let reachable = true;
  client.on('serverHeartbeatFailed', (event) => {
    if (!reachable) return;
    reachable = false;
    logger.warn({ server: event.connectionId, err: event.failure }, `${storeName} unreachable`);
  });
  client.on('serverHeartbeatSucceeded', (event) => {
    if (reachable) return;
    reachable = true;
    logger.info({ server: event.connectionId }, `${storeName} reachable again`);
  });
}

/** How long a store operation may wait for its server's answer, by default (see mongoClient). */
export const DEFAULT_OPERATION_TIMEOUT_MS = 30_000;

export interface MongoClientOptions {
  /** How long an operation waits for a reachable server before StoreUnavailableError. */
  serverSelectionTimeoutMS?: number;
  /**
   * How long any operation may wait for the server's answer: past it the driver drops the
   * connection and the operation rejects (StoreUnavailableError), so a store that stops
   * answering (FerretDB wedged, a partitioned server) shows as errors, never as a silent hang.
   * Above what a legitimate operation takes (searches stop themselves earlier, by maxTimeMS).
   */
  operationTimeoutMS?: number;
}

/** How soon a client whose first connection failed tries again (see reopenWhenClosed). */
const REOPEN_DELAY_MS = 1000;

/**
 * A client whose every operation has a deadline; it connects on first use, and keeps trying
 * when that first connection fails (reopenWhenClosed).
 */
export function mongoClient(
  url: string,
  options: MongoClientOptions,
  logger: StoreLogger | undefined,
  storeName: string,
): MongoClient {
  const selection = options.serverSelectionTimeoutMS ?? 5000;
  const client = new MongoClient(url, {
    serverSelectionTimeoutMS: selection,
    connectTimeoutMS: selection,
    socketTimeoutMS: options.operationTimeoutMS ?? DEFAULT_OPERATION_TIMEOUT_MS,
  });
  watchConnection(client, logger, storeName);
  reopenWhenClosed(client, logger, storeName);
  return client;
}

/**
 * The driver (6.x) closes a client whose first connection fails, and every later operation
 * then fails with MongoTopologyClosedError, even once the server is back: a worker started
 * while its store was down would never reach it. So a close nobody asked for is followed by a
 * connect, again each time it fails; operations meanwhile fail as unavailable (store-errors.ts).
 */
function reopenWhenClosed(
  client: MongoClient,
  logger: StoreLogger | undefined,
  storeName: string,
): void {
  let asked = false;
  const close = client.close.bind(client);
  client.close = (force?: boolean) => {
    asked = true;
    return close(force);
  };
  client.on('topologyClosed', () => {
    if (asked) return;
    setTimeout(() => {
      if (asked) return;
      client.connect().then(
        () => logger?.info({}, `${storeName} connected`),
        () => undefined, // it failed: the driver closed it again, and this runs again
      );
    }, REOPEN_DELAY_MS).unref();
  });
}

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

/** A client whose every operation has a deadline; it connects on first use. */
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
  return client;
}

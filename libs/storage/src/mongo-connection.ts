import type { MongoClient } from 'mongodb';

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

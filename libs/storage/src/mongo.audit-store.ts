import type { Filter, MongoBulkWriteError, MongoClient } from 'mongodb';
import {
  auditCursorPosition,
  auditPage,
  checkAuditLimit,
  checkAuditRows,
  MAX_AUDIT_PAGE,
  type AuditQuery,
  type AuditRow,
  type AuditStore,
} from './audit-store';
import { mongoClient, type MongoClientOptions, type StoreLogger } from './mongo-connection';
import { duplicateKeyIndexes, toStoreError } from './store-errors';

export interface MongoAuditStoreOptions extends MongoClientOptions {
  /** Either a URL (the store owns and closes its client) or a client shared with other stores. */
  url?: string;
  client?: MongoClient;
  database: string;
  collection?: string;
  logger?: StoreLogger;
}

interface AuditDocument {
  _id: string;
  at: Date;
  actor: string;
  action: string;
  device: string | null;
  outcome: AuditRow['outcome'];
  outcome_code: string | null;
  duration_ms: number | null;
  details: AuditRow['details'];
}

/**
 * AuditStore over the native driver, insert-only: `_id` is the row's id, so a redelivered row
 * meets a duplicate key (unordered insertMany, as the content store) and the stored one stays.
 * Reads and deletes are plain finds bounded by their limit: FerretDB v1 uses no index but
 * `_id` (it reads the collection for each), MongoDB the indexes ensureSchema makes. Every
 * operation has the client's deadlines (mongo-connection.ts); errors go through toStoreError.
 */
export function createMongoAuditStore(options: MongoAuditStoreOptions): AuditStore {
  const { client, owned } = clientFor(options);
  const rows = client.db(options.database).collection<AuditDocument>(options.collection ?? 'audit');

  return {
    ensureSchema: () =>
      translated('ensureSchema', async () => {
        // One createIndex at a time: FerretDB v1 drops the connection when a multi-index
        // createIndexes finds them all existing. The newest-first order (and the retention's
        // oldest first), and the two filters the console uses most: a device, a token.
        await rows.createIndex({ at: -1, _id: -1 }, { name: 'at_-1__id_-1' });
        await rows.createIndex({ device: 1, at: -1, _id: -1 }, { name: 'device_1_at_-1__id_-1' });
        await rows.createIndex({ actor: 1, at: -1, _id: -1 }, { name: 'actor_1_at_-1__id_-1' });
      }),

    insertRows: (audit) =>
      translated('insertRows', async () => {
        checkAuditRows(audit);
        if (audit.length === 0) return { inserted: 0, alreadyStored: 0 }; // the driver refuses none
        try {
          const result = await rows.insertMany(audit.map(documentOf), { ordered: false });
          return { inserted: result.insertedCount, alreadyStored: 0 };
        } catch (error) {
          const duplicates = duplicateKeyIndexes(error);
          if (duplicates === undefined) throw error;
          return {
            inserted: (error as MongoBulkWriteError).insertedCount,
            alreadyStored: duplicates.length,
          };
        }
      }),

    query: (query) =>
      translated('query', async () => {
        const limit = checkAuditLimit(query.limit, MAX_AUDIT_PAGE);
        const found = await rows
          .find(filterOf(query))
          .sort({ at: -1, _id: -1 })
          .limit(limit + 1)
          .toArray();
        return auditPage(found.map(rowOf), limit);
      }),

    deleteOlderThan: (cutoff, { limit }) =>
      translated('deleteOlderThan', async () => {
        checkAuditLimit(limit);
        const older = await rows
          .find({ at: { $lt: cutoff } }, { projection: { _id: 1 } })
          .sort({ at: 1, _id: 1 })
          .limit(limit)
          .toArray();
        if (older.length === 0) return 0;
        const result = await rows.deleteMany({ _id: { $in: older.map((row) => row._id) } });
        return result.deletedCount;
      }),

    close: async () => {
      if (owned) await client.close();
    },
  };
}

/** Every filter given, and strictly after the cursor's row in newest-first order. */
function filterOf(query: AuditQuery): Filter<AuditDocument> {
  const parts: Array<Filter<AuditDocument>> = [];
  if (query.device !== undefined) parts.push({ device: query.device });
  if (query.actor !== undefined) parts.push({ actor: query.actor });
  if (query.action !== undefined) parts.push({ action: query.action });
  if (query.from) parts.push({ at: { $gte: query.from } });
  if (query.to) parts.push({ at: { $lt: query.to } });
  if (query.cursor !== undefined) {
    const after = auditCursorPosition(query.cursor);
    const at = new Date(after.atMs);
    parts.push({ $or: [{ at: { $lt: at } }, { at, _id: { $lt: after.id } }] });
  }
  return parts.length === 0 ? {} : { $and: parts };
}

function documentOf(row: AuditRow): AuditDocument {
  return {
    _id: row.id,
    at: row.at,
    actor: row.actor,
    action: row.action,
    device: row.device,
    outcome: row.outcome,
    outcome_code: row.outcomeCode,
    duration_ms: row.durationMs,
    details: row.details,
  };
}

function rowOf(document: AuditDocument): AuditRow {
  return {
    id: document._id,
    at: document.at,
    actor: document.actor,
    action: document.action,
    device: document.device,
    outcome: document.outcome,
    outcomeCode: document.outcome_code,
    durationMs: document.duration_ms,
    details: document.details,
  };
}

function clientFor(options: MongoAuditStoreOptions): { client: MongoClient; owned: boolean } {
  if (options.client) return { client: options.client, owned: false };
  if (!options.url) throw new TypeError('the audit store needs a url or a client');
  return {
    client: mongoClient(options.url, options, options.logger, 'audit store'),
    owned: true,
  };
}

async function translated<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toStoreError(error, operation, 'audit store');
  }
}

import type { MongoClient } from 'mongodb';
import type { ArchiveState } from '@screenfleet/contracts';
import type { ArchiveLeaseName, ArchiveStateStore } from './archive-state-store';
import { mongoClient, type MongoClientOptions, type StoreLogger } from './mongo-connection';
import { ignoringDuplicate, termLease, type LeaseTerm } from './mongo-term-lease';
import { toStoreError } from './store-errors';

export interface MongoArchiveStateStoreOptions extends MongoClientOptions {
  /** Either a URL (the store owns and closes its client) or a client shared with other stores. */
  url?: string;
  client?: MongoClient;
  database: string;
  /** Holds the one state document. */
  collection?: string;
  /** Holds the worker lease's terms; the task lease's are in `<leaseCollection>_task`. */
  leaseCollection?: string;
  logger?: StoreLogger;
}

const STATE_ID = 'state';

type StateDocument = ArchiveState & { _id: typeof STATE_ID };
/**
 * The fields one update wrote, beside the base document, one document per set of field names
 * (`_id` "fields:<names>"): a single replace, so an update lands whole or not at all. `seq`
 * orders them, so where two sets share a field the later write wins.
 */
interface FieldsDocument {
  _id: string;
  values: Record<string, unknown>;
  seq: number;
}
const FIELDS_PREFIX = 'fields:';
const fieldsId = (names: string[]) => `${FIELDS_PREFIX}${[...names].sort().join(',')}`;

/**
 * ArchiveStateStore over the native driver. The state is a base document stored as given (Dates
 * as BSON dates), so fields added to ArchiveState later persist without changes here, and beside
 * it one document per set of fields written by update (FieldsDocument), which load lays over the
 * base in write order. Not a `$set` on the one document: FerretDB v1 runs an update as a read and
 * a replace of the whole document, so two concurrent `$set`s of different fields (a configure and
 * a pass's progress) lose one of them; writes to different documents cannot, and each update is
 * one replace, so a crash never leaves half of it written.
 *
 * The leases are term leases (mongo-term-lease.ts). Plain CRUD only, no transactions.
 */
export function createMongoArchiveStateStore(
  options: MongoArchiveStateStoreOptions,
): ArchiveStateStore {
  const { client, owned } = clientFor(options);
  const db = client.db(options.database);
  const states = db.collection<StateDocument>(options.collection ?? 'archive_state');
  const leaseCollection = options.leaseCollection ?? 'archive_lease';
  const leases: Record<ArchiveLeaseName, ReturnType<typeof termLease>> = {
    worker: termLease(db.collection<LeaseTerm>(leaseCollection)),
    task: termLease(db.collection<LeaseTerm>(`${leaseCollection}_task`)),
  };
  const fieldDocs = db.collection<FieldsDocument>(options.collection ?? 'archive_state');

  /** The base document with the fields written by updates laid over it, oldest first. */
  async function storedState(): Promise<ArchiveState | null> {
    const documents = await states.find({}).toArray();
    const base = documents.find((document) => document._id === STATE_ID);
    if (!base) return null;
    const state = withoutId(base) as unknown as Record<string, unknown>;
    const updates = (documents as unknown as FieldsDocument[])
      .filter((document) => document._id.startsWith(FIELDS_PREFIX))
      .sort((a, b) => a.seq - b.seq);
    for (const update of updates) Object.assign(state, update.values);
    return state as unknown as ArchiveState;
  }

  // Wall-clock microseconds, kept increasing within this process; across workers, clocks in
  // sync (the lease assumes it too) order writes of the same field.
  let lastSeq = 0;
  const nextSeq = () => (lastSeq = Math.max(lastSeq + 1, Date.now() * 1000));

  return {
    load: (initial) =>
      translated('load', async () => {
        const stored = await storedState();
        if (stored) return stored;
        // Insert-if-absent, then read: when two workers start together, one insert wins and
        // both return the winner's document.
        await ignoringDuplicate(() => states.insertOne({ ...initial, _id: STATE_ID }));
        const winner = await storedState();
        if (!winner) throw new Error('archive state vanished right after it was stored');
        return winner;
      }),

    save: (state) =>
      translated('save', async () => {
        const replacement = withoutId(state as StateDocument);
        const write = (upsert: boolean) =>
          states.replaceOne({ _id: STATE_ID }, replacement, { upsert });
        // Two first saves racing: one upsert inserts, the other meets a duplicate key and
        // replaces the document that now exists.
        if (!(await ignoringDuplicate(() => write(true)))) await write(false);
        // The whole state is the base document now: fields written by update go.
        await fieldDocs.deleteMany({ _id: { $ne: STATE_ID } });
      }),

    update: (fields) =>
      translated('update', async () => {
        const values = Object.fromEntries(
          Object.entries(fields).filter(([, value]) => value !== undefined),
        );
        if (!(await states.findOne({ _id: STATE_ID }, { projection: { _id: 1 } }))) {
          throw new Error('no archive state to update: load (which stores the initial one) first');
        }
        const id = fieldsId(Object.keys(values));
        const write = (upsert: boolean) =>
          fieldDocs.replaceOne({ _id: id }, { values, seq: nextSeq() }, { upsert });
        if (!(await ignoringDuplicate(() => write(true)))) await write(false);
      }),

    acquireLease: (holder, ttlMs, now, lease = 'worker') =>
      translated('acquireLease', () => leases[lease].acquire(holder, ttlMs, now)),

    releaseLease: (holder, lease = 'worker') =>
      translated('releaseLease', () => leases[lease].release(holder)),

    leaseHolder: (now, lease = 'worker') =>
      translated('leaseHolder', () => leases[lease].holder(now)),

    close: async () => {
      if (owned) await client.close();
    },
  };
}

function clientFor(options: MongoArchiveStateStoreOptions): {
  client: MongoClient;
  owned: boolean;
} {
  if (options.client) return { client: options.client, owned: false };
  if (!options.url) throw new TypeError('the archive state store needs a url or a client');
  return {
    client: mongoClient(options.url, options, options.logger, 'archive state store'),
    owned: true,
  };
}

function withoutId(document: StateDocument): ArchiveState {
  const { _id: _ignored, ...state } = document;
  return state;
}

async function translated<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw toStoreError(error, operation, 'archive state store');
  }
}

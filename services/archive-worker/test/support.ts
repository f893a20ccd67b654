/** What the archive worker's integration tests share: real stores of their own per test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { MongoClient } from 'mongodb';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger, Registry, waitFor, WaitTimeoutError } from '@screenfleet/runtime';
import {
  createFilesystemArchiveStore,
  createMongoArchiveStateStore,
  createMongoAuditStore,
  createMongoContentStore,
  createS3ArchiveStore,
  createSqliteArchiveStateStore,
  createSqliteAuditStore,
  createSqliteContentStore,
  openSqliteDatabase,
  type ArchiveStateStore,
  type ArchiveStore,
  type AuditStore,
  type ContentDocument,
  type ContentStore,
} from '@screenfleet/storage';
import type { ArchiveSettings } from '@screenfleet/contracts';
import { createArchiveWorker, type ArchiveWorkerDeps } from '@screenfleet/archive-worker';
import {
  databaseName,
  mongoUrl,
  s3BucketName,
  s3Settings,
  uniqueName,
} from '../../../test/services';

export const logger = createLogger({ service: 'archive-test', level: 'silent' });

export const settings = (overrides: Partial<ArchiveSettings> = {}): ArchiveSettings => ({
  enabled: true,
  retention_days: 7,
  storage_limit: 1e12,
  ...overrides,
});

const day = 86_400_000;
let seq = 0;
/** A content item `daysAgo` days old (fractions allowed), with a unique id. */
export function item(daysAgo: number, overrides: Partial<ContentDocument> = {}): ContentDocument {
  seq += 1;
  const timestamp = new Date(Math.floor((Date.now() - daysAgo * day) / 1000) * 1000);
  return {
    _id: `${uniqueName('item')}-${String(seq).padStart(6, '0')}`,
    device_name: 'desk-1',
    content_type: 'frames',
    timestamp,
    timestamp_source: 'client',
    received_at: timestamp,
    file_path: null,
    app_name: 'Code',
    window_name: `file-${seq}.ts`,
    ocr_results: [
      {
        text: `some text ${seq}`,
        confidence: 0.9,
        text_json: null,
        ocr_engine: 'tesseract',
        focused: true,
      },
    ],
    tags: ['work'],
    transcription: null,
    ...overrides,
  };
}

export interface Stores {
  content: ContentStore;
  archive: ArchiveStore;
  state: ArchiveStateStore;
  /** The audit rows, in the same database or file (the worker's audit retention). */
  audit: AuditStore;
  /** The Mongo database's name, or the embedded mode's SQLite file. */
  database: string;
  s3?: { bucket: string; prefix: string };
  /** The fs archive's directory. */
  dir?: string;
  /** The embedded mode's data directory (DATA_DIR). */
  dataDir?: string;
  close(): Promise<void>;
}

/** A fresh database on the real MongoDB-protocol server and a fresh archive (MinIO or a dir). */
export async function openStores(kind: 's3' | 'fs' = 's3'): Promise<Stores> {
  const database = databaseName('archive');
  const content = createMongoContentStore({
    url: mongoUrl(),
    database,
    serverSelectionTimeoutMS: 3000,
  });
  await content.ensureIndexes();
  const state = createMongoArchiveStateStore({ url: mongoUrl(), database });
  const audit = createMongoAuditStore({ url: mongoUrl(), database });
  let archive: ArchiveStore;
  let s3: Stores['s3'];
  let dir: string | undefined;
  if (kind === 's3') {
    const given = s3Settings();
    s3 = { bucket: given.bucket ?? s3BucketName('sf-aw'), prefix: uniqueName('archive') };
    archive = createS3ArchiveStore({
      endpoint: given.endpoint,
      region: given.region,
      forcePathStyle: given.forcePathStyle,
      credentials: given.credentials,
      bucket: s3.bucket,
      prefix: s3.prefix,
      maxAttempts: 1,
      connectionTimeoutMs: 1000,
      requestTimeoutMs: 3000,
    });
  } else {
    dir = mkdtempSync(path.join(tmpdir(), 'sf-archive-'));
    archive = createFilesystemArchiveStore({ root: dir });
  }
  await archive.ensureReady();
  return {
    content,
    archive,
    state,
    audit,
    database,
    ...(s3 ? { s3 } : {}),
    ...(dir ? { dir } : {}),
    async close() {
      await archive.close();
      await audit.close();
      await state.close();
      await content.close();
      const client = new MongoClient(mongoUrl());
      await client
        .db(database)
        .dropDatabase()
        .finally(() => client.close());
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The embedded mode's stores: one SQLite file (content, state and audit, each store on its own
 * connection, as a second process would have) and a filesystem archive, in a temp data dir.
 */
export async function openEmbeddedStores(): Promise<Stores> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sf-embedded-archive-'));
  const file = path.join(dir, 'screenfleet.db');
  const contentDb = await openSqliteDatabase(file);
  const stateDb = await openSqliteDatabase(file);
  const content = createSqliteContentStore({ database: contentDb });
  const state = createSqliteArchiveStateStore({ database: stateDb });
  const auditDb = await openSqliteDatabase(file);
  const audit = createSqliteAuditStore({ database: auditDb });
  const archive = createFilesystemArchiveStore({ root: path.join(dir, 'archive') });
  await archive.ensureReady();
  return {
    content,
    archive,
    state,
    audit,
    database: file,
    dir: path.join(dir, 'archive'),
    dataDir: dir,
    async close() {
      await archive.close();
      await auditDb.close();
      await stateDb.close();
      await contentDb.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Mode = 'distributed' | 'embedded';
/** The stores of a mode: FerretDB + MinIO, or SQLite + a directory. */
export const storesOf = (mode: Mode) =>
  mode === 'distributed' ? openStores('s3') : openEmbeddedStores();

export async function allItems(content: ContentStore): Promise<ContentDocument[]> {
  const docs: ContentDocument[] = [];
  for await (const chunk of content.scanRange(
    { to: new Date('2200-01-01T00:00:00Z') },
    { chunkSize: 1000 },
  )) {
    docs.push(...chunk);
  }
  return docs;
}

export async function archivedKeys(archive: ArchiveStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const object of archive.list(prefix)) keys.push(object.key);
  return keys;
}

export function byId(docs: ContentDocument[]): ContentDocument[] {
  return [...docs].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
}

export function workerFor(stores: Stores, extra: Partial<ArchiveWorkerDeps> = {}) {
  return createArchiveWorker({
    bus: { serve: () => Promise.resolve({ cancel: () => Promise.resolve() }) },
    content: stores.content,
    archive: stores.archive,
    state: stores.state,
    defaults: settings(),
    chunkSize: 5,
    intervalMs: 3_600_000,
    leaseTtlMs: 3000,
    retry: { initialMs: 200, maxMs: 1000 },
    holderId: uniqueName('holder'),
    logger,
    registry: new Registry(),
    ...extra,
  });
}

/**
 * Polls `read` until `done` holds or the deadline passes; returns the last value, which callers
 * assert on (a failed expectation shows it, where a timeout would not).
 */
export async function waitUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  let value!: T;
  await waitFor(async () => done((value = await read())), {
    timeoutMs,
    what: 'the awaited value',
  }).catch((error: unknown) => {
    if (!(error instanceof WaitTimeoutError)) throw error;
  });
  return value;
}

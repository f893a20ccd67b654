/**
 * In-memory fakes of the ports, for the domain's unit tests. They keep the semantics the real
 * adapters' contract suites check (keyset scan in (timestamp, _id), idempotent inserts), so a
 * test that passes here fails for the same reasons against the real stores.
 */
import { createHash } from 'node:crypto';
import { NotFoundError, type ArchiveState } from '@screenfleet/contracts';
import { summariseDeleted } from '@screenfleet/storage';
import type {
  ArchiveLeaseName,
  ArchiveObject,
  ArchiveStateStore,
  ArchiveStore,
  ContentDocument,
  ContentStore,
  TimeRange,
} from '@screenfleet/storage';
import type { MediaCheck, MediaFiles } from '../src/domain/media-files';

const byKey = (a: ContentDocument, b: ContentDocument) =>
  a.timestamp.getTime() - b.timestamp.getTime() || (a._id < b._id ? -1 : a._id > b._id ? 1 : 0);

export function memoryContentStore(initial: ContentDocument[] = []) {
  const items = new Map(initial.map((doc) => [doc._id, structuredClone(doc)]));
  const inRange = (doc: ContentDocument, range: TimeRange) =>
    (!range.from || doc.timestamp >= range.from) &&
    doc.timestamp < range.to &&
    (range.device === undefined || doc.device_name === range.device);
  const store: ContentStore & { items: Map<string, ContentDocument>; restoredIds: Set<string> } = {
    items,
    /** Items stored by an insert that said they came back from the archive (`restored`). */
    restoredIds: new Set(),
    ensureIndexes: () => Promise.resolve(),
    insertItems(docs, options = {}) {
      let inserted = 0;
      for (const doc of docs) {
        if (items.has(doc._id)) continue;
        items.set(doc._id, structuredClone(doc));
        if (options.restored) store.restoredIds.add(doc._id);
        inserted += 1;
      }
      return Promise.resolve({ inserted, alreadyStored: docs.length - inserted });
    },
    async *scanRange(range, { chunkSize }) {
      let after: ContentDocument | undefined;
      for (;;) {
        const chunk = [...items.values()]
          .filter((doc) => inRange(doc, range) && (!after || byKey(doc, after) > 0))
          .sort(byKey)
          .slice(0, chunkSize)
          .map((doc) => structuredClone(doc));
        if (chunk.length === 0) return;
        yield await Promise.resolve(chunk);
        if (chunk.length < chunkSize) return;
        after = chunk[chunk.length - 1];
      }
    },
    countRange: (range) =>
      Promise.resolve([...items.values()].filter((doc) => inRange(doc, range)).length),
    deleteByIds(ids) {
      let deleted = 0;
      for (const id of ids) if (items.delete(id)) deleted += 1;
      return Promise.resolve(deleted);
    },
    deleteRange(range, { limit }) {
      const gone = [...items.values()]
        .filter(
          (doc) =>
            (!range.from || doc.timestamp >= range.from) &&
            (!range.to || doc.timestamp < range.to) &&
            (range.device === undefined || doc.device_name === range.device),
        )
        .sort(byKey)
        .slice(0, limit);
      for (const doc of gone) items.delete(doc._id);
      return Promise.resolve(summariseDeleted(gone));
    },
    filePathsInUse: (paths) =>
      Promise.resolve(
        new Set(
          [...items.values()]
            .map((doc) => doc.file_path)
            .filter((p) => p !== null && paths.includes(p)) as string[],
        ),
      ),
    // The archive worker never searches nor reads counters; a test that makes it should fail loudly.
    search: () => Promise.reject(new Error('memoryContentStore does not search')),
    deviceCounters: () => Promise.reject(new Error('memoryContentStore keeps no counters')),
    deviceListing: () => Promise.reject(new Error('memoryContentStore keeps no counters')),
    newestItemTimes: () => Promise.reject(new Error('memoryContentStore keeps no counters')),
    forgetDevice: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  return store;
}

export function memoryArchiveStore() {
  const objects = new Map<string, Buffer>();
  const hash = (body: Buffer) => createHash('sha256').update(body).digest('hex');
  let failure: Error | undefined;
  const guard = () => {
    if (failure) throw failure;
  };
  const store: ArchiveStore & { objects: Map<string, Buffer>; failWith(error?: Error): void } = {
    objects,
    failWith(error) {
      failure = error;
    },
    ensureReady: () => Promise.resolve(),
    put(key, body, { sha256 }) {
      guard();
      if (hash(body) !== sha256) throw new Error('checksum mismatch');
      objects.set(key, Buffer.from(body));
      return Promise.resolve();
    },
    verify(key, sha256) {
      guard();
      const body = objects.get(key);
      return Promise.resolve(body !== undefined && hash(body) === sha256);
    },
    size(key) {
      guard();
      return Promise.resolve(objects.get(key)?.length ?? null);
    },
    get(key) {
      guard();
      const body = objects.get(key);
      if (!body) throw new NotFoundError(`no object ${key}`);
      return Promise.resolve(Buffer.from(body));
    },
    async *list(prefix) {
      guard();
      const keys = [...objects.keys()].filter((key) => key.startsWith(prefix)).sort();
      for (const key of keys) {
        yield await Promise.resolve<ArchiveObject>({ key, size: objects.get(key)!.length });
      }
    },
    delete(key) {
      objects.delete(key);
      return Promise.resolve();
    },
    removeUnfinished: () => Promise.resolve({ count: 0, bytes: 0 }),
    close: () => Promise.resolve(),
  };
  return store;
}

export function memoryStateStore() {
  let stored: ArchiveState | undefined;
  const leases: Partial<Record<ArchiveLeaseName, { holder: string; expires_at: Date }>> = {};
  const store: ArchiveStateStore & { current(): ArchiveState | undefined } = {
    current: () => (stored ? structuredClone(stored) : undefined),
    load(initial) {
      stored ??= structuredClone(initial);
      return Promise.resolve(structuredClone(stored));
    },
    save(state) {
      stored = structuredClone(state);
      return Promise.resolve();
    },
    update(fields) {
      if (!stored) return Promise.reject(new Error('no archive state to update'));
      const set = Object.entries(fields).filter(([, value]) => value !== undefined);
      stored = { ...stored, ...structuredClone(Object.fromEntries(set)) };
      return Promise.resolve();
    },
    acquireLease(holder, ttlMs, now, name = 'worker') {
      const lease = leases[name];
      if (lease && lease.holder !== holder && lease.expires_at >= now) {
        return Promise.resolve(false);
      }
      leases[name] = { holder, expires_at: new Date(now.getTime() + ttlMs) };
      return Promise.resolve(true);
    },
    releaseLease(holder, name = 'worker') {
      if (leases[name]?.holder === holder) delete leases[name];
      return Promise.resolve();
    },
    leaseHolder(now, name = 'worker') {
      const lease = leases[name];
      return Promise.resolve(lease && lease.expires_at >= now ? lease.holder : null);
    },
    close: () => Promise.resolve(),
  };
  return store;
}

/** Files under `/media`; anything else is refused, like the real confinement. */
export function memoryMedia(files: Record<string, string>) {
  const contents = new Map(Object.entries(files).map(([p, text]) => [p, Buffer.from(text)]));
  const media: MediaFiles & { contents: Map<string, Buffer> } = {
    contents,
    check(filePath): Promise<MediaCheck> {
      if (!filePath.startsWith('/media/') || filePath.includes('..'))
        return Promise.resolve({ kind: 'refused', reason: 'outside the media root' });
      const body = contents.get(filePath);
      return Promise.resolve(
        body ? { kind: 'inside', realPath: filePath, size: body.length } : { kind: 'missing' },
      );
    },
    read: (realPath) => Promise.resolve(contents.get(realPath)!),
    remove(realPath) {
      contents.delete(realPath);
      return Promise.resolve();
    },
  };
  return media;
}

let seq = 0;
export function buildDoc(overrides: Partial<ContentDocument> = {}): ContentDocument {
  seq += 1;
  const timestamp = overrides.timestamp ?? new Date(Date.UTC(2026, 0, 1, 0, 0, seq));
  return {
    _id: `item-${String(seq).padStart(6, '0')}`,
    device_name: 'desk-1',
    content_type: 'frames',
    timestamp,
    timestamp_source: 'client',
    received_at: timestamp,
    file_path: null,
    app_name: 'Code',
    window_name: 'main.ts',
    ocr_results: [
      { text: `text ${seq}`, confidence: 0.9, text_json: null, ocr_engine: null, focused: true },
    ],
    tags: ['work'],
    transcription: null,
    ...overrides,
  };
}

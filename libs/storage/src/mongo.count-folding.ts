import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AnyBulkWriteOperation, Collection, Document } from 'mongodb';
import {
  applyDeltas,
  countsOf,
  deviceKey,
  hourKey,
  type CountDelta,
  type Counts,
} from './mongo.count-deltas';
import type { CountCollections, FoldRound } from './mongo.count-collections';
import { byOrder } from './mongo.current-counts';
import { termLease } from './mongo-term-lease';

/**
 * Writes per command at most. FerretDB 1.24 (SQLite) keeps a pooled connection for each
 * statement of an update command that matches a document until the command ends, its pool holds
 * 100, and the 100th waits for ever for one only its own command can free: the whole database
 * stops answering (shared/notes/ferretdb.md). Only the one folder writes counter documents, one
 * command at a time.
 */
const MAX_STATEMENTS = 16;

export interface CountFolding {
  /**
   * A delta is folded once older than this: until then a redelivered message finds its own
   * delta and counts nothing twice (default 60 s).
   */
  foldAfterMs?: number;
  /** How often a store tries to fold (default 1 s); 0: never (this store only writes deltas). */
  intervalMs?: number;
}

/**
 * Folding the deltas into the counter documents: one store at a time (a term lease), in rounds
 * recorded whole before they are written, so that any folder can finish a round left half way.
 */
export function countFolder(
  { devices, hours, archive, deltas, rounds, leaseTerms }: CountCollections,
  folding: CountFolding,
) {
  const lease = termLease(leaseTerms);
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  const foldAfterMs = folding.foldAfterMs ?? 60_000;
  const intervalMs = folding.intervalMs ?? 1000;

  return {
    /**
     * Folds the deltas older than foldAfterMs (and every delta before a settle or a forget,
     * which apply in order) into the counter documents, when this store holds the fold lease:
     * a round is recorded whole, then its documents written, then its deltas deleted. A round
     * left by a folder that died is finished first. Returns the deltas folded.
     */
    async fold(now = new Date()): Promise<number> {
      if (!(await lease.acquire(holder, Math.max(10_000, intervalMs * 10), now))) return 0;
      const left = await rounds.findOne({});
      if (left) await finish(left);
      const ready = foldable(
        (await deltas.find({}).toArray()).sort(byOrder).slice(0, 500),
        now.getTime() - foldAfterMs,
      );
      if (ready.length === 0) return 0;
      const counts = await documentsFor(ready);
      const before = {
        devices: new Set(counts.devices.keys()),
        hours: new Set(counts.hours.keys()),
        archive: new Set(counts.archive.keys()),
      };
      applyDeltas(counts, ready);
      const changed = <T extends { _id: string }>(
        name: keyof Counts['touched'],
        docs: Map<string, T>,
      ) => ({
        writes: [...counts.touched[name]].flatMap((id) => (docs.has(id) ? [docs.get(id)!] : [])),
        deletes: [...counts.touched[name]].filter((id) => !docs.has(id) && before[name].has(id)),
      });
      const d = changed('devices', counts.devices);
      const h = changed('hours', counts.hours);
      const a = changed('archive', counts.archive);
      const round: FoldRound = {
        _id: randomUUID(),
        deltas: ready.map((delta) => delta._id),
        writes: { devices: d.writes, hours: h.writes, archive: a.writes },
        deletes: { devices: d.deletes, hours: h.deletes, archive: a.deletes },
      };
      await rounds.insertOne(round);
      await finish(round);
      return ready.length;
    },

    /** Folds now and then while the store is open (see CountFolding); stop() ends it. */
    startFolding(onError: (error: unknown) => void) {
      if (intervalMs <= 0) return { stop: () => Promise.resolve() };
      let stopped = false;
      let running: Promise<unknown> = Promise.resolve();
      const timer = setInterval(() => {
        running = running.then(() => (stopped ? 0 : this.fold())).catch(onError);
      }, intervalMs);
      timer.unref();
      return {
        async stop() {
          stopped = true;
          clearInterval(timer);
          await running;
          await lease.release(holder).catch(() => undefined);
        },
      };
    },
  };

  /** Writes a round's documents (whole, so writing them again is harmless), then forgets it. */
  async function finish(round: FoldRound): Promise<void> {
    await replaceAll(devices, round.writes.devices);
    await replaceAll(hours, round.writes.hours);
    await replaceAll(archive, round.writes.archive);
    if (round.deletes.devices.length)
      await devices.deleteMany({ _id: { $in: round.deletes.devices } });
    if (round.deletes.hours.length) await hours.deleteMany({ _id: { $in: round.deletes.hours } });
    if (round.deletes.archive.length)
      await archive.deleteMany({ _id: { $in: round.deletes.archive } });
    await deltas.deleteMany({ _id: { $in: round.deltas } });
    await rounds.deleteOne({ _id: round._id });
  }

  async function replaceAll<T extends Document & { _id: string }>(
    collection: Collection<T>,
    docs: T[],
  ): Promise<void> {
    for (let i = 0; i < docs.length; i += MAX_STATEMENTS) {
      const ops = docs.slice(i, i + MAX_STATEMENTS).map((doc): AnyBulkWriteOperation<T> => ({
        replaceOne: { filter: { _id: doc._id } as never, replacement: doc, upsert: true },
      }));
      await collection.bulkWrite(ops, { ordered: false });
    }
  }

  /** The counter documents the deltas touch, as stored. */
  async function documentsFor(ready: CountDelta[]): Promise<Counts> {
    const deviceIds = new Set<string>();
    const hourIds = new Set<string>();
    const archiveIds = new Set<string>();
    const forgotten = new Set<string>();
    for (const delta of ready) {
      for (const change of delta.changes ?? []) {
        deviceIds.add(deviceKey(change.device, change.type));
        for (const { hour } of change.hours) hourIds.add(hourKey(change.device, change.type, hour));
      }
      for (const { device } of delta.archived ?? []) archiveIds.add(device);
      for (const { device, type } of delta.settle ?? []) deviceIds.add(deviceKey(device, type));
      if (delta.forget !== undefined) {
        forgotten.add(delta.forget);
        archiveIds.add(delta.forget);
      }
    }
    const byDevice = { device_name: { $in: [...forgotten] } };
    const [deviceDocs, hourDocs, archiveDocs] = await Promise.all([
      devices.find({ $or: [{ _id: { $in: [...deviceIds] } }, byDevice] }).toArray(),
      hours.find({ $or: [{ _id: { $in: [...hourIds] } }, byDevice] }).toArray(),
      archive.find({ _id: { $in: [...archiveIds] } }).toArray(),
    ]);
    return countsOf(deviceDocs, hourDocs, archiveDocs);
  }
}

/**
 * The deltas a fold takes, in order: those older than the cutoff, and all before the last settle
 * or forget among them (those apply in order after what came before them).
 */
function foldable(sorted: CountDelta[], cutoffMs: number): CountDelta[] {
  let end = sorted.findIndex((delta) => delta.at.getTime() >= cutoffMs);
  if (end < 0) end = sorted.length;
  let lastOp = -1;
  sorted.forEach((delta, i) => {
    if (delta.settle || delta.forget !== undefined) lastOp = i;
  });
  return sorted.slice(0, Math.max(end, lastOp + 1));
}

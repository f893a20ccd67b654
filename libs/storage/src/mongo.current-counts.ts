import {
  applyDeltas,
  countsOf,
  type ArchiveDoc,
  type CountDelta,
  type Counts,
  type DeviceDoc,
  type HourDoc,
} from './mongo.count-deltas';
import type { CountCollections, FoldRound } from './mongo.count-collections';

/**
 * The counts as they stand now: the stored counter documents, a fold round in progress laid
 * over them, then the deltas not folded yet applied in order.
 */
export function currentCounts({ deltas, rounds }: CountCollections) {
  /** The deltas not folded yet, in order, and a round in progress (its writes count as done). */
  async function pending(): Promise<{ deltas: CountDelta[]; round: FoldRound | null }> {
    const [round, all] = await Promise.all([rounds.findOne({}), deltas.find({}).toArray()]);
    const folded = new Set(round?.deltas ?? []);
    return { deltas: all.filter((delta) => !folded.has(delta._id)).sort(byOrder), round };
  }

  /** The counts of these documents with the pending deltas applied. */
  async function current(
    loaded: { devices: DeviceDoc[]; hours: HourDoc[]; archive: ArchiveDoc[] },
    only?: (device: string) => boolean,
  ): Promise<Counts> {
    const { deltas: unfolded, round } = await pending();
    const counts = countsOf(loaded.devices, loaded.hours, loaded.archive);
    if (round) overlay(counts, round, only);
    applyDeltas(
      counts,
      only === undefined ? unfolded : unfolded.map((delta) => deltaFor(delta, only)),
    );
    return counts;
  }

  return { pending, current };
}

export type CurrentCounts = ReturnType<typeof currentCounts>;

export const byOrder = (a: CountDelta, b: CountDelta) =>
  a.at.getTime() - b.at.getTime() || (a._id < b._id ? -1 : a._id > b._id ? 1 : 0);

/** A round in progress counts as written: its documents replace the stored ones it names. */
function overlay(counts: Counts, round: FoldRound, only?: (device: string) => boolean): void {
  const keep = (device: string) => only === undefined || only(device);
  for (const doc of round.writes.devices)
    if (keep(doc.device_name)) counts.devices.set(doc._id, doc);
  for (const doc of round.writes.hours) if (keep(doc.device_name)) counts.hours.set(doc._id, doc);
  for (const doc of round.writes.archive) if (keep(doc._id)) counts.archive.set(doc._id, doc);
  for (const id of round.deletes.devices) counts.devices.delete(id);
  for (const id of round.deletes.hours) counts.hours.delete(id);
  for (const id of round.deletes.archive) counts.archive.delete(id);
}

/** The part of a delta about the devices kept (a read of named devices). */
function deltaFor(delta: CountDelta, only: (device: string) => boolean): CountDelta {
  return {
    _id: delta._id,
    at: delta.at,
    ...(delta.changes && { changes: delta.changes.filter((c) => only(c.device)) }),
    ...(delta.archived && { archived: delta.archived.filter((a) => only(a.device)) }),
    ...(delta.settle && { settle: delta.settle.filter((s) => only(s.device)) }),
    ...(delta.forget !== undefined && only(delta.forget) ? { forget: delta.forget } : {}),
  };
}

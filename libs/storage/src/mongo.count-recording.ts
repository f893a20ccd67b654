import { createHash, randomUUID } from 'node:crypto';
import type { ContentType } from '@screenfleet/contracts';
import type { ContentDocument } from './content-store';
import { HOUR_MS } from './device-counters';
import { countChanges, type CountDelta } from './mongo.count-deltas';
import type { CountCollections } from './mongo.count-collections';
import type { CurrentCounts } from './mongo.current-counts';
import { duplicateKeyIndexes } from './store-errors';

type Item = Pick<ContentDocument, 'device_name' | 'content_type' | 'timestamp'> &
  Partial<Pick<ContentDocument, 'received_at'>>;

/** A counted item and the message that carries it (the key of its delta). */
export type CountedItem = Item & { batch?: string };

/**
 * What inserts and deletes change in the counts, recorded as deltas beside the items (a write
 * never updates a counter document: mongo.device-counters.ts).
 */
export function countRecording(
  { items, devices, hours, deltas }: CountCollections,
  { current }: CurrentCounts,
) {
  /**
   * Inserts deltas; one already there (a redelivery's) is left as it is. The deltas of writes
   * that finish while an insert of deltas is under way go together in the next one: one commit
   * (an fsync, on FerretDB's SQLite) for many batches rather than one more per batch.
   */
  const record = groupedWrites(async (written: CountDelta[]) => {
    try {
      await deltas.insertMany(written, { ordered: false });
    } catch (error) {
      if (duplicateKeyIndexes(error) === undefined) throw error;
    }
  });

  return {
    /**
     * Counts items an insert stored: one delta per message (`batch`), keyed by it, so that a
     * redelivery counts nothing twice; items of no message in one delta of their own.
     * `restored`: they come back from the archive and leave its counts too.
     */
    async added(stored: CountedItem[], options: { restored?: boolean } = {}): Promise<void> {
      const loose = `a:${randomUUID()}`;
      const byDelta = new Map<string, CountedItem[]>();
      for (const item of stored) {
        const key = item.batch === undefined ? loose : `a:${item.batch}`;
        const group = byDelta.get(key);
        if (group) group.push(item);
        else byDelta.set(key, [item]);
      }
      const at = new Date();
      await record(
        [...byDelta].map(([_id, group]) => ({
          _id,
          at,
          changes: countChanges(group, 1),
          ...(options.restored ? { archived: archivedBy(group, -1) } : {}),
        })),
      );
    },

    /**
     * Counts items about to be deleted (by an archive pass, `archived`: also into the archive
     * counts), before the delete: keyed by the items, so a delete run again after dying half
     * way finds the same items and the same delta, or finds them gone and counts nothing.
     */
    async deleting(gone: Array<Item & { _id: string }>, archived: boolean): Promise<void> {
      if (gone.length === 0) return;
      // With when each was received: the same ids stored again later and deleted once more
      // (a client re-sending deleted items) are another delete.
      const keys = gone.map((item) => `${item._id}@${item.received_at?.getTime() ?? ''}`).sort();
      await record([
        {
          _id: `d:${createHash('sha256').update(keys.join('\u0000')).digest('base64url')}`,
          at: new Date(),
          changes: countChanges(gone, -1),
          ...(archived ? { archived: archivedBy(gone, 1) } : {}),
        },
      ]);
    },

    /** The items about to be deleted (device, type, time), for `deleting`. */
    async toDelete(ids: string[]): Promise<Array<Item & { _id: string }>> {
      return items
        .find(
          { _id: { $in: ids } },
          { projection: { _id: 1, device_name: 1, content_type: 1, timestamp: 1, received_at: 1 } },
        )
        .toArray();
    },

    /**
     * Sets each (device, type)'s first and last item time from the items it still holds (after
     * a range delete), through the oldest and newest hourly buckets that still count items: it
     * reads a bucket's items at most, never the device's history (sqlite's settleItemTimes).
     */
    async settleItemTimes(
      pairs: Iterable<{ device_name: string; content_type: string }>,
    ): Promise<void> {
      const settle: NonNullable<CountDelta['settle']> = [];
      for (const { device_name, content_type } of pairs) {
        const buckets = await bucketsOf(device_name, content_type);
        const first = await edgeItemTime(device_name, content_type, buckets, 1);
        const last =
          first === null
            ? null
            : await edgeItemTime(device_name, content_type, [...buckets].reverse(), -1);
        settle.push({ device: device_name, type: content_type, first, last });
      }
      if (settle.length === 0) return;
      await record([{ _id: `s:${randomUUID()}`, at: new Date(), settle }]);
    },

    /**
     * After a delete of a whole device: its archive counts go, and the counts of its content
     * types that count no item. Items stored since the delete's last chunk stay counted.
     */
    async forget(device: string): Promise<void> {
      await record([{ _id: `f:${randomUUID()}`, at: new Date(), forget: device }]);
    },
  };

  /** The (device, type)'s hours with items, oldest first, as stored with the deltas applied. */
  async function bucketsOf(device: string, type: string): Promise<number[]> {
    const [deviceDocs, hourDocs] = await Promise.all([
      devices.find({ device_name: device }).toArray(),
      hours.find({ device_name: device, content_type: type }).toArray(),
    ]);
    const counts = await current(
      { devices: deviceDocs, hours: hourDocs, archive: [] },
      (name) => name === device,
    );
    return [...counts.hours.values()]
      .filter((bucket) => bucket.content_type === type)
      .map((bucket) => bucket.hour.getTime())
      .sort((x, y) => x - y);
  }

  /** The first item time (buckets oldest first, order 1) or the last (newest first, -1). */
  async function edgeItemTime(
    device: string,
    type: string,
    buckets: number[],
    order: 1 | -1,
  ): Promise<number | null> {
    for (const hour of buckets) {
      const item = await items
        .find(
          {
            device_name: device,
            content_type: type as ContentType,
            timestamp: { $gte: new Date(hour), $lt: new Date(hour + HOUR_MS) },
          },
          { projection: { _id: 0, timestamp: 1 } },
        )
        .sort({ timestamp: order })
        .limit(1)
        .next();
      if (item) return item.timestamp.getTime();
    }
    return null;
  }
}

/**
 * `write` for what is given, with what is given while a write is under way gathered into the next
 * one: each caller's promise settles with the write that carried its values.
 */
function groupedWrites<T>(write: (values: T[]) => Promise<void>) {
  let queued: Array<{ values: T[]; done: (error?: Error) => void }> = [];
  let writing = false;
  async function drain(): Promise<void> {
    writing = true;
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      const error = await write(batch.flatMap((entry) => entry.values)).then(
        () => undefined,
        (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
      );
      for (const entry of batch) entry.done(error);
    }
    writing = false;
  }
  return (values: T[]): Promise<void> => {
    if (values.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      queued.push({ values, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!writing) void drain();
    });
  };
}

/** Per device: how many items (times `sign`) and the newest item's time. */
function archivedBy(gone: Item[], sign: 1 | -1): NonNullable<CountDelta['archived']> {
  const perDevice = new Map<string, { items: number; last: number }>();
  for (const item of gone) {
    const entry = perDevice.get(item.device_name) ?? { items: 0, last: -Infinity };
    entry.items += sign;
    entry.last = Math.max(entry.last, item.timestamp.getTime());
    perDevice.set(item.device_name, entry);
  }
  return [...perDevice].map(([device, { items, last }]) =>
    sign === 1 ? { device, items, last } : { device, items },
  );
}

import type { ContentType } from '@screenfleet/contracts';

/**
 * Per-device counters, kept by the content store as it stores and deletes items (GET /devices
 * reads them instead of counting items on request). What they count:
 *
 * - `itemsStored` and the hourly buckets: items **in the store now**. An insert adds the items
 *   it newly stored (never a redelivered one); a delete (an archive pass's or a privacy delete)
 *   subtracts the items it removed. The sqlite adapter does both in the transaction that stores
 *   or deletes the items; the mongo adapter right after (no transactions on FerretDB).
 * - `firstItemTime` / `lastItemTime`: the oldest and newest item timestamp the device sent. An
 *   archive pass's delete does not move them; a range delete (POST /data/delete-range) sets them
 *   from the items left, found through the oldest and newest hourly buckets that still count
 *   items: it reads one hour's items at most, never the device's whole history.
 * - `firstReceivedAt` / `lastReceivedAt`: when the gateway received the device's first and latest
 *   batch that stored something: whether the device is sending (capture ok / stalled / idle) is
 *   judged on these, not on the items' own timestamps (a desktop's clock may be off).
 * - `itemsArchived` / `lastArchivedItemTime`: items an archive pass moved out of the store and
 *   that are still out: a restore (insertItems with `restored`) takes the items it brings back
 *   off `itemsArchived`, so an item archived again is counted once. The time stays.
 */
export interface ContentTypeCounters {
  contentType: ContentType;
  itemsStored: number;
  firstItemTime: Date | null;
  lastItemTime: Date | null;
  firstReceivedAt: Date | null;
  lastReceivedAt: Date | null;
  /** Items of the last 60 minutes before `now`, from hourly buckets (see windowShare). */
  itemsLastHour: number;
  itemsLast24h: number;
}

export interface DeviceCounters {
  deviceName: string;
  /** Sorted by content type; a type the device never sent is absent. */
  byContentType: ContentTypeCounters[];
  itemsArchived: number;
  lastArchivedItemTime: Date | null;
  /** With `hours: true`: the hourly buckets (all types) from `hoursSince` on, oldest first. */
  hours?: HourCount[];
}

export interface HourCount {
  /** The bucket's start, a whole UTC hour. */
  start: Date;
  items: number;
}

export interface DeviceCountersQuery {
  /** The end of the windows (last hour, last 24 h). */
  now: Date;
  /** Only these devices; absent = every device the store has counters for. */
  devices?: readonly string[];
  /** Also each device's hourly buckets from `hoursSince` (GET /devices/{name}'s timeline). */
  hoursSince?: Date;
}

export interface DeleteOptions {
  /**
   * The items were archived (the archive worker deletes them after a verified upload): they are
   * also added to their devices' `itemsArchived`. Absent: a plain delete.
   */
  archived?: boolean;
}

export const HOUR_MS = 3_600_000;

/** The start of the UTC hour holding `ms` (floor, also for times before 1970). */
export function hourStart(ms: number): number {
  return ms - (((ms % HOUR_MS) + HOUR_MS) % HOUR_MS);
}

/**
 * How much of an hourly bucket counts toward a window starting at `windowStartMs` (and ending
 * now): 1 for a bucket wholly inside it, the overlapping fraction for the bucket the window
 * starts in, 0 before. Buckets hold no finer times, so the oldest bucket is counted pro rata
 * (as Prometheus' increase() extrapolates): exact for items spread evenly over that hour,
 * never off by more than that one bucket's items. Both adapters compute this (sqlite in SQL).
 */
export function windowShare(bucketStartMs: number, windowStartMs: number): number {
  return Math.min(1, Math.max(0, (bucketStartMs + HOUR_MS - windowStartMs) / HOUR_MS));
}

/** The windows of ContentTypeCounters, by their start. */
export function windowStarts(now: Date): { lastHour: number; last24h: number } {
  return { lastHour: now.getTime() - HOUR_MS, last24h: now.getTime() - 24 * HOUR_MS };
}

/** Device names in JavaScript's order (UTF-16 code units): every listing of counters is sorted so. */
export const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * What the soak's producers sent, and the count at the end, as Jepsen counts: every item is
 * numbered per device (its file_path carries the number) and its timestamp kept; a batch's
 * items are `accepted` when it got a 200. At the end every item found in the content store and
 * in the archive (its chunks, read through their manifests) is matched back to its number:
 * `lost` = accepted and found nowhere, `duplicated` = found more than once across both (by
 * device, file_path and timestamp), `unexpected` = found but never sent as such.
 */
import { ocrText } from '../test/support/content';

const DAY_MS = 86_400_000;
const SENT = 0;
const ACCEPTED = 1;
const REFUSED = 2;

export interface SoakItem {
  file_path: string;
  timestamp: string;
  app_name: string;
  window_name: string;
  ocr_results: Array<{ text: string; confidence: number }>;
  tags: string[];
}

export interface SoakBatch {
  device: string;
  first: number;
  count: number;
  /** The body, kept as sent: a retry re-sends exactly these bytes. */
  body: string;
}

/** What a stored or archived item says of itself, all the count needs. */
export interface FoundItem {
  device_name: string;
  file_path: string | null;
  timestamp: Date;
}

export interface Tally {
  accepted: number;
  /** Items of batches that never got a 200 (refused, unknown, or cut off by the end). */
  not_accepted: number;
  /** Distinct sent items found in the content store or the archive. */
  stored: number;
  in_store: number;
  archived: number;
  lost: number;
  duplicated: number;
  /** Items stored although their batch got no 200 (an unknown outcome that was stored). */
  stored_not_accepted: number;
  unexpected: number;
}

interface DeviceLedger {
  timestamps: number[];
  states: number[];
  found: Uint8Array;
}

/** What share of the items the archive moves as soon as they are stored (two days old). */
export const OLD_SHARE = 4 / 20;
/** What share stays in the content store (stamped when made). */
export const FRESH_SHARE = 1 / 20;

const FILE_PATH = /^\/captures\/([^/]+)\/frame-(\d+)\.mp4$/;

export class Ledger {
  private readonly devices = new Map<string, DeviceLedger>();
  private readonly oldBase: number;

  /**
   * Timestamps, by the item's number: of every 20 items, 4 are two days old (past a 1-day
   * retention when sent), 1 is stamped with the time it is made (it stays in the content store)
   * and 15 are `agingMs` short of the retention (a day old `agingMs` after they were made: the
   * archive moves them a little later). So the archive works all through the run and the
   * content store holds a bounded number of items, whatever the run's length.
   */
  constructor(
    private readonly agingMs: number,
    now = Date.now(),
  ) {
    this.oldBase = now - 2 * DAY_MS;
  }

  /** The next `count` items of `device`, as a body for POST /add (`old`: all two days old). */
  batch(device: string, count: number, options: { old?: boolean } = {}): SoakBatch {
    const ledger = this.ledgerOf(device);
    const first = ledger.timestamps.length;
    const now = Date.now();
    const data: SoakItem[] = [];
    for (let seq = first; seq < first + count; seq += 1) {
      ledger.timestamps.push(this.timestampOf(seq, now, options.old ?? false));
      ledger.states.push(SENT);
      data.push({
        file_path: `/captures/${device}/frame-${seq}.mp4`,
        timestamp: new Date(ledger.timestamps[seq]!).toISOString(),
        app_name: seq % 3 === 0 ? 'Chromium' : 'Code',
        window_name: `file-${seq % 17}.ts - screenfleet`,
        ocr_results: [{ text: ocrText(seq), confidence: 0.91 }],
        tags: ['soak'],
      });
    }
    const body = JSON.stringify({
      device_name: device,
      content: { content_type: 'frames', data },
    });
    return { device, first, count, body };
  }

  private timestampOf(seq: number, now: number, old: boolean): number {
    const kind = seq % 20;
    // Old items 1 ms apart from two days back, in numbering order: a device never repeats one.
    if (old || kind < 4) return this.oldBase + seq;
    if (kind === 4) return now;
    return now - DAY_MS + this.agingMs;
  }

  settle(batch: SoakBatch, accepted: boolean): void {
    const states = this.ledgerOf(batch.device).states;
    for (let seq = batch.first; seq < batch.first + batch.count; seq += 1) {
      states[seq] = accepted ? ACCEPTED : REFUSED;
    }
  }

  accepted(): number {
    let count = 0;
    for (const ledger of this.devices.values())
      count += ledger.states.filter((s) => s === ACCEPTED).length;
    return count;
  }

  /** Counts what the store and the archive hold against what was sent. */
  async tally(store: AsyncIterable<FoundItem>, archive: AsyncIterable<FoundItem>): Promise<Tally> {
    for (const ledger of this.devices.values()) ledger.found = new Uint8Array(ledger.states.length);
    let unexpected = 0;
    const match = (item: FoundItem): boolean => {
      const parsed = FILE_PATH.exec(item.file_path ?? '');
      const ledger = this.devices.get(item.device_name);
      const seq = Number(parsed?.[2]);
      if (!parsed || parsed[1] !== item.device_name || !ledger || !(seq < ledger.states.length))
        return false;
      if (ledger.timestamps[seq] !== item.timestamp.getTime()) return false;
      ledger.found[seq] = Math.min(255, (ledger.found[seq] ?? 0) + 1);
      return true;
    };
    let inStore = 0;
    for await (const item of store) {
      if (match(item)) inStore += 1;
      else unexpected += 1;
    }
    let archived = 0;
    for await (const item of archive) {
      if (match(item)) archived += 1;
      else unexpected += 1;
    }
    const tally: Tally = {
      accepted: 0,
      not_accepted: 0,
      stored: 0,
      in_store: inStore,
      archived,
      lost: 0,
      duplicated: 0,
      stored_not_accepted: 0,
      unexpected,
    };
    for (const ledger of this.devices.values()) {
      ledger.states.forEach((state, seq) => {
        const found = ledger.found[seq] ?? 0;
        if (state === ACCEPTED) tally.accepted += 1;
        else tally.not_accepted += 1;
        if (found > 0) tally.stored += 1;
        if (found > 1) tally.duplicated += 1;
        if (state === ACCEPTED && found === 0) tally.lost += 1;
        if (state !== ACCEPTED && found > 0) tally.stored_not_accepted += 1;
      });
    }
    return tally;
  }

  private ledgerOf(device: string): DeviceLedger {
    let ledger = this.devices.get(device);
    if (!ledger) {
      ledger = { timestamps: [], states: [], found: new Uint8Array(0) };
      this.devices.set(device, ledger);
    }
    return ledger;
  }
}

import {
  ConflictError,
  deletedRangeCovers,
  NotFoundError,
  type ArchiveDeletedRange,
  type ArchiveSettings,
} from '@screenfleet/contracts';
import type { ArchiveStore, ContentDocument, ContentStore } from '@screenfleet/storage';
import { ArchiveObjectCorruptError, decodeChunk, openBytes, type OpenKeys } from './chunk-codec';
import { manifestSpan, type ManifestEntry } from './manifest';
import type { MediaRestoreOutcome, MediaWriter } from './media-files';

export interface RestoreDeps {
  archive: Pick<ArchiveStore, 'list' | 'get'>;
  content: Pick<ContentStore, 'insertItems'>;
  /** What opens the objects (openKeysFor); absent: no keys, plain objects only. */
  keys?: OpenKeys;
  /** Absent when no media root is configured: media files then stay in the archive. */
  media?: MediaWriter;
  /**
   * Asked before each chunk: false once the restore no longer holds the archive's task lease
   * (another task may run now), which stops it with what it restored so far reported.
   */
  stillHeld?: () => boolean;
  /** The archive's deleted ranges (ArchiveState.deleted_ranges): what they cover stays out. */
  deleted?: readonly ArchiveDeletedRange[];
}

export interface RestoreRange {
  /** Inclusive. */
  from: Date;
  /** Exclusive, like every range in the content store. */
  to: Date;
  device?: string;
}

/** An archived object a restore could not read, and why: its items (or file) are not back. */
export interface UnreadableObject {
  key: string;
  reason: string;
}

export interface RestoreReport {
  chunks: number;
  /** Items put back into the content store. */
  restored: number;
  /** Items in range that the content store held already (idempotent re-insert). */
  alreadyStored: number;
  /** Archived items of the range left out because they were deleted (POST /data/delete-*). */
  deletedSkipped: number;
  /** Media files of the restored items, by what happened to each (see MediaRestoreOutcome). */
  media: Record<MediaRestoreOutcome, number>;
  /**
   * Objects in range that could not be read: a key that is not configured, damage (a SHA-256
   * or decryption that does not match), or a missing object. The rest is restored all the same.
   */
  unreadable: UnreadableObject[];
}

/**
 * Restored items are older than the retention: an enabled archive would move them out (and
 * delete them) again at its next pass, or a pass in hand could delete them in its cleanup. So a
 * restore needs the archive disabled; re-enable it once the restored items are no longer needed.
 */
export function refuseRestoreWhileEnabled(settings: Pick<ArchiveSettings, 'enabled'>): void {
  if (settings.enabled) {
    throw new ConflictError(
      'the archive is enabled: restored items would be archived and deleted again by the next pass; disable the archive first (POST /archive/configure {"enabled": false}), then restore',
    );
  }
}

/**
 * Puts archived items of [from, to) (of one device, when given) back into the content store,
 * except those a delete covers (`deleted`). The chunks are read by archivedChunkReader: every
 * chunk is checked against its manifest's SHA-256 and decrypted before anything of it is
 * inserted; an object that cannot be read (another key, damage, missing) is reported in
 * `unreadable` and its items are skipped, every other item is restored. Chunks already restored re-insert as
 * "already stored", so a restore can simply be repeated. With a media writer, each media file
 * of the restored items is fetched, checked, decrypted and written back to its path (never over
 * a different file). A store that is unreachable fails the restore (run it again).
 */
export async function restoreRange(deps: RestoreDeps, range: RestoreRange): Promise<RestoreReport> {
  const report: RestoreReport = {
    chunks: 0,
    restored: 0,
    alreadyStored: 0,
    deletedSkipped: 0,
    media: { written: 0, already: 0, conflict: 0, refused: 0 },
    unreadable: [],
  };
  const reader = archivedChunkReader(deps, report.unreadable);
  const lost = () =>
    new ConflictError(
      `the restore lost the archive's task lease (another task may run now; is the state store reachable?) after ${report.restored} items restored: run it again`,
    );
  for await (const { manifest, docs } of reader.chunks(range, lost)) {
    const archivedAt = new Date(manifest.created_at);
    const inRange = docs.filter((doc) => inArchivedRange(doc, range));
    const wanted = inRange.filter(
      (doc) =>
        !(deps.deleted ?? []).some((deleted) => deletedRangeCovers(deleted, doc, archivedAt)),
    );
    report.deletedSkipped += inRange.length - wanted.length;
    report.chunks += 1;
    if (wanted.length === 0) continue;
    // Media first: an item is back only with its file (or with the reason it is not).
    if (deps.media) {
      const named = new Set(wanted.map((doc) => doc.file_path));
      for (const entry of manifest.media.filter((m) => named.has(m.file_path))) {
        const bytes = await reader.read(entry.key, (body) =>
          openBytes(body, reader.keys, { name: entry.key, sha256: entry.sha256 }),
        );
        if (bytes) report.media[await deps.media.restore(entry.file_path, bytes)] += 1;
      }
    }
    // `restored`: off their devices' archive counts, so an item is counted as stored or archived.
    const result = await deps.content.insertItems(wanted, { restored: true });
    report.restored += result.inserted;
    report.alreadyStored += result.alreadyStored;
  }
  return report;
}

/** Bounds of a read of archived items: either absent for no bound; of one device when given. */
export interface ArchivedRange {
  /** Inclusive. */
  from?: Date;
  /** Exclusive. */
  to?: Date;
  device?: string;
}

/** True when the item is in the range (its time and device). */
export function inArchivedRange(
  doc: Pick<ContentDocument, 'timestamp' | 'device_name'>,
  range: ArchivedRange,
): boolean {
  return (
    (range.from === undefined || doc.timestamp >= range.from) &&
    (range.to === undefined || doc.timestamp < range.to) &&
    (range.device === undefined || doc.device_name === range.device)
  );
}

/**
 * Reads the archived chunks that may hold items of a range, for a restore or a delete. Only the
 * manifests whose names say their chunk meets the range are read (names from before the last
 * item's time was in them are read when they start before `to`). Each chunk is checked against
 * its manifest's SHA-256 and decrypted; an object that cannot be read (another key, damage,
 * missing) is added to `unreadable` and skipped; any other error fails the read.
 */
export function archivedChunkReader(
  deps: Pick<RestoreDeps, 'archive' | 'keys' | 'stillHeld'>,
  unreadable: UnreadableObject[],
) {
  const keys = deps.keys ?? { readers: [], acceptPlain: true };
  /** The object opened, or undefined with it reported unreadable (any other error fails). */
  async function read<T>(key: string, open: (body: Buffer) => T): Promise<T | undefined> {
    try {
      return open(await deps.archive.get(key));
    } catch (error) {
      if (!(error instanceof ArchiveObjectCorruptError || error instanceof NotFoundError)) {
        throw error;
      }
      unreadable.push({ key, reason: error.message });
      return undefined;
    }
  }

  /** Each readable chunk meeting the range, with its manifest; `lost` is thrown once the task lease is. */
  async function* chunks(
    range: ArchivedRange,
    lost: () => Error,
  ): AsyncGenerator<{ manifest: ManifestEntry; docs: ContentDocument[] }> {
    for await (const object of deps.archive.list('manifests/')) {
      const span = manifestSpan(object.key);
      if (
        span &&
        ((range.to !== undefined && span.first >= range.to) ||
          (range.from !== undefined && span.last && span.last < range.from))
      ) {
        continue;
      }
      if (deps.stillHeld && !deps.stillHeld()) throw lost();
      const manifest = await read(object.key, (body) =>
        parseManifest(object.key, openBytes(body, keys, { name: object.key })),
      );
      if (!manifest || !overlaps(manifest, range)) continue;
      const docs = await read(manifest.chunk_key, (body) =>
        decodeChunk(body, keys, { name: manifest.chunk_key, sha256: manifest.sha256 }),
      );
      if (docs) yield { manifest, docs };
    }
  }

  return { keys, read, chunks };
}

/**
 * The archive's last_error after a restore that met unreadable objects: the first few by name,
 * and how many (undefined when every object was read).
 */
export function restoreLastError(range: RestoreRange, report: RestoreReport): string | undefined {
  const count = report.unreadable.length;
  if (count === 0) return undefined;
  const named = report.unreadable
    .slice(0, 3)
    .map((object) => `${object.key} (${object.reason})`)
    .join('; ');
  return (
    `restore of ${range.from.toISOString()}..${range.to.toISOString()}: ${count} archived ` +
    `object${count === 1 ? '' : 's'} could not be read, their items are not restored: ${named}` +
    (count > 3 ? `; and ${count - 3} more` : '')
  );
}

function parseManifest(key: string, bytes: Buffer): ManifestEntry {
  try {
    return JSON.parse(bytes.toString('utf8')) as ManifestEntry;
  } catch (cause) {
    throw new ArchiveObjectCorruptError(`archive object ${key} is not a valid manifest (damaged)`, {
      cause,
    });
  }
}

function overlaps(manifest: ManifestEntry, range: ArchivedRange): boolean {
  if (range.device !== undefined && !manifest.devices.includes(range.device)) return false;
  return (
    (range.from === undefined || new Date(manifest.last.timestamp) >= range.from) &&
    (range.to === undefined || new Date(manifest.first.timestamp) < range.to)
  );
}

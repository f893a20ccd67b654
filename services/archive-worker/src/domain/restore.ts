import { ConflictError, type ArchiveSettings } from '@screenfleet/contracts';
import type { ArchiveStore, ContentStore } from '@screenfleet/storage';
import { ArchiveObjectCorruptError, decodeChunk, openBytes } from './chunk-codec';
import { manifestDay, type ManifestEntry } from './manifest';
import type { MediaRestoreOutcome, MediaWriter } from './media-files';

export interface RestoreDeps {
  archive: Pick<ArchiveStore, 'list' | 'get'>;
  content: Pick<ContentStore, 'insertItems'>;
  encryptionKey?: Buffer;
  /** Absent when no media root is configured: media files then stay in the archive. */
  media?: MediaWriter;
  /**
   * Asked before each chunk: false once the restore no longer holds the archive's task lease
   * (another task may run now), which stops it with what it restored so far reported.
   */
  stillHeld?: () => boolean;
}

export interface RestoreRange {
  /** Inclusive. */
  from: Date;
  /** Exclusive, like every range in the content store. */
  to: Date;
  device?: string;
}

export interface RestoreReport {
  chunks: number;
  /** Items put back into the content store. */
  restored: number;
  /** Items in range that the content store held already (idempotent re-insert). */
  alreadyStored: number;
  /** Media files of the restored items, by what happened to each (see MediaRestoreOutcome). */
  media: Record<MediaRestoreOutcome, number>;
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
 * Puts archived items of [from, to) (of one device, when given) back into the content store.
 * Every chunk is checked against its manifest's SHA-256 and decrypted before anything is
 * inserted; a tampered or truncated object fails the restore with ArchiveObjectCorruptError.
 * Chunks already restored re-insert as "already stored", so a restore can simply be repeated.
 * With a media writer, each media file of the restored items is fetched, checked against its
 * manifest SHA-256, decrypted and written back to its path (never over a different file).
 */
export async function restoreRange(deps: RestoreDeps, range: RestoreRange): Promise<RestoreReport> {
  const report: RestoreReport = {
    chunks: 0,
    restored: 0,
    alreadyStored: 0,
    media: { written: 0, already: 0, conflict: 0, refused: 0 },
  };
  const toDay = dayOf(new Date(range.to.getTime() - 1));
  for await (const object of deps.archive.list('manifests/')) {
    // Manifests are named by their chunk's first item: a later day cannot hold items in range.
    const day = manifestDay(object.key);
    if (day !== undefined && day > toDay) continue;
    if (deps.stillHeld && !deps.stillHeld()) {
      throw new ConflictError(
        `the restore lost the archive's task lease (another task may run now; is the state store reachable?) after ${report.restored} items restored: run it again`,
      );
    }
    const manifest = parseManifest(
      object.key,
      openBytes(await deps.archive.get(object.key), deps.encryptionKey, { name: object.key }),
    );
    if (!overlaps(manifest, range)) continue;
    const docs = decodeChunk(await deps.archive.get(manifest.chunk_key), deps.encryptionKey, {
      name: manifest.chunk_key,
      sha256: manifest.sha256,
    });
    const wanted = docs.filter(
      (doc) =>
        doc.timestamp >= range.from &&
        doc.timestamp < range.to &&
        (range.device === undefined || doc.device_name === range.device),
    );
    report.chunks += 1;
    if (wanted.length === 0) continue;
    // Media first: an item is back only with its file (or with the reason it is not).
    if (deps.media) {
      const named = new Set(wanted.map((doc) => doc.file_path));
      for (const entry of manifest.media.filter((m) => named.has(m.file_path))) {
        const bytes = openBytes(await deps.archive.get(entry.key), deps.encryptionKey, {
          name: entry.key,
          sha256: entry.sha256,
        });
        report.media[await deps.media.restore(entry.file_path, bytes)] += 1;
      }
    }
    const result = await deps.content.insertItems(wanted);
    report.restored += result.inserted;
    report.alreadyStored += result.alreadyStored;
  }
  return report;
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

function overlaps(manifest: ManifestEntry, range: RestoreRange): boolean {
  if (range.device !== undefined && !manifest.devices.includes(range.device)) return false;
  return (
    new Date(manifest.last.timestamp) >= range.from && new Date(manifest.first.timestamp) < range.to
  );
}

const dayOf = (date: Date) => date.toISOString().slice(0, 10).replace(/-/g, '/');

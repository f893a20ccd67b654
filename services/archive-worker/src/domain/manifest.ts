import { createHash } from 'node:crypto';
import type { ContentDocument } from '@screenfleet/storage';

/** One media file uploaded with a chunk. */
export interface ManifestMedia {
  /** The item's file_path as stored (what a restore puts back). */
  file_path: string;
  key: string;
  sha256: string;
  size: number;
}

/** A media file of the chunk that was not archived, and why (never read, nor deleted). */
export interface ManifestSkippedMedia {
  file_path: string;
  /** missing: nothing there; refused: not a file the archive may read (see detail). */
  reason: 'missing' | 'refused';
  detail?: string;
}

/**
 * What a restore needs to find and check a chunk without opening it: stored (sealed like the
 * chunk) under `manifests/` with the same name as the chunk under `chunks/`.
 */
export interface ManifestEntry {
  version: 1;
  chunk_key: string;
  /** Hex SHA-256 of the stored chunk bytes. */
  sha256: string;
  size: number;
  count: number;
  devices: string[];
  first: { timestamp: string; id: string };
  last: { timestamp: string; id: string };
  media: ManifestMedia[];
  /** Named by items of the chunk but not archived: the items travel without them. */
  media_skipped?: ManifestSkippedMedia[];
  created_at: string;
}

/**
 * Keys of a chunk, its manifest and its media: named by the first item's time (so a listing is
 * in time order, and a day's objects share a prefix) and a hash of every id in the chunk, and
 * the chunk and media keys also by the SHA-256 of their stored bytes. An object key is never
 * written with different bytes: two workers uploading the same items (one past its lease) write
 * two chunks side by side, and whichever manifest stays names a chunk whose bytes match it.
 * Unencrypted, the same items give the same bytes, so a re-upload after a crash overwrites the
 * unrecorded copy with identical bytes; encrypted (a random IV), it leaves an unreferenced copy.
 */
export function chunkKeys(docs: readonly ContentDocument[]) {
  const first = docs[0];
  if (!first) throw new RangeError('a chunk has at least one item');
  const hash = createHash('sha256');
  for (const doc of docs) hash.update(doc._id).update('\n');
  const iso = first.timestamp.toISOString();
  const day = `${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)}`;
  const name = `${day}/${iso.replace(/[-:.]/g, '')}-${hash.digest('hex').slice(0, 16)}`;
  return {
    /** `sha256`: hex SHA-256 of the stored (sealed) chunk. */
    chunk: (sha256: string) => `chunks/${name}-${sha256}.jsonl.gz.sfa`,
    manifest: `manifests/${name}.json.sfa`,
    /** `sha256`: hex SHA-256 of the stored (sealed) media object. */
    media: (index: number, filePath: string, sha256: string) =>
      `media/${name}/${index}-${sha256}-${safeBaseName(filePath)}.sfa`,
  };
}

/** The day folder (YYYY/MM/DD) of a manifest key, for skipping manifests outside a range. */
export function manifestDay(key: string): string | undefined {
  return /^manifests\/(\d{4}\/\d{2}\/\d{2})\//.exec(key)?.[1];
}

export function buildManifest(
  docs: readonly ContentDocument[],
  chunk: { key: string; sha256: string; size: number },
  media: ManifestMedia[],
  now: Date,
  skipped: ManifestSkippedMedia[] = [],
): ManifestEntry {
  const first = docs[0]!;
  const last = docs[docs.length - 1]!;
  return {
    version: 1,
    chunk_key: chunk.key,
    sha256: chunk.sha256,
    size: chunk.size,
    count: docs.length,
    devices: [...new Set(docs.map((doc) => doc.device_name))].sort(),
    first: { timestamp: first.timestamp.toISOString(), id: first._id },
    last: { timestamp: last.timestamp.toISOString(), id: last._id },
    media,
    media_skipped: skipped,
    created_at: now.toISOString(),
  };
}

/** A key segment from a file's base name: letters, digits, "-", "_" and "." only, no leading ".". */
function safeBaseName(filePath: string): string {
  const base = filePath.split(/[\\/]/).pop() ?? '';
  const safe = base.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.+/, '');
  return (safe || 'file').slice(0, 100);
}

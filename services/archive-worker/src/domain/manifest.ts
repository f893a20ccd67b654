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
 * Keys of a chunk, its manifest and its media: named by the first and last items' times (so a
 * listing is in time order, a day's objects share a prefix, and a restore skips the manifests
 * of other times by their names alone) and a hash of every id in the chunk, and the chunk and
 * media keys also by the SHA-256 of their stored bytes. An object key is never written with
 * different bytes: two workers uploading the same items (one past its lease) write two chunks
 * side by side, and whichever manifest stays names a chunk whose bytes match it. Unencrypted,
 * the same items give the same bytes, so a re-upload after a crash overwrites the unrecorded
 * copy with identical bytes; encrypted (a random IV), it leaves an unreferenced copy (swept).
 */
export function chunkKeys(docs: readonly ContentDocument[]) {
  const first = docs[0];
  const last = docs[docs.length - 1];
  if (!first || !last) throw new RangeError('a chunk has at least one item');
  const hash = createHash('sha256');
  for (const doc of docs) hash.update(doc._id).update('\n');
  const iso = first.timestamp.toISOString();
  const day = `${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)}`;
  const ids = hash.digest('hex').slice(0, 16);
  const name = `${day}/${compact(first.timestamp)}-${compact(last.timestamp)}-${ids}`;
  return {
    /** `sha256`: hex SHA-256 of the stored (sealed) chunk. */
    chunk: (sha256: string) => `chunks/${name}-${sha256}.jsonl.gz.sfa`,
    manifest: `manifests/${name}.json.sfa`,
    /** `sha256`: hex SHA-256 of the stored (sealed) media object. */
    media: (index: number, filePath: string, sha256: string) =>
      `media/${name}/${index}-${sha256}-${safeBaseName(filePath)}.sfa`,
  };
}

/**
 * Which object of which chunk a key is, from its name as chunkKeys made it: the item set's name
 * (day, times and id hash, the same for a chunk, its manifest and its media files), and for
 * media the file's index in the chunk. Undefined for a key of another form.
 */
export function objectOfChunk(
  key: string,
): { kind: 'chunk' | 'manifest' | 'media'; itemSet: string; index?: number } | undefined {
  const chunk = /^chunks\/(.+)-[0-9a-f]{64}\.jsonl\.gz\.sfa$/.exec(key);
  if (chunk) return { kind: 'chunk', itemSet: chunk[1]! };
  const manifest = /^manifests\/(.+)\.json\.sfa$/.exec(key);
  if (manifest) return { kind: 'manifest', itemSet: manifest[1]! };
  const media = /^media\/(.+)\/(\d+)-[0-9a-f]{64}-[^/]*\.sfa$/.exec(key);
  if (media) return { kind: 'media', itemSet: media[1]!, index: Number(media[2]) };
  return undefined;
}

/** The SHA-256 a chunk's key names (of its stored bytes), as chunkKeys wrote it. */
export function chunkSha256(key: string): string | undefined {
  return /-([0-9a-f]{64})\.jsonl\.gz\.sfa$/.exec(key)?.[1];
}

/** 2026-01-02T03:04:05.006Z as 20260102T030405006Z: sorts as the time does, no ":" in keys. */
const compact = (date: Date) => date.toISOString().replace(/[-:.]/g, '');
const fromCompact = (text: string) =>
  new Date(
    `${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6, 8)}T${text.slice(9, 11)}:` +
      `${text.slice(11, 13)}:${text.slice(13, 15)}.${text.slice(15, 18)}Z`,
  );
const MANIFEST_NAME =
  /^manifests\/\d{4}\/\d{2}\/\d{2}\/(\d{8}T\d{9}Z)(?:-(\d{8}T\d{9}Z))?-[0-9a-f]{16}\.json\.sfa$/;

/**
 * The times a manifest's name says its chunk spans, for skipping manifests outside a range
 * without reading them: first and last item (`last` absent for names from before it was
 * added, which have the first only); undefined for a name of another form.
 */
export function manifestSpan(key: string): { first: Date; last?: Date } | undefined {
  const match = MANIFEST_NAME.exec(key);
  if (!match) return undefined;
  const first = fromCompact(match[1]!);
  return match[2] ? { first, last: fromCompact(match[2]) } : { first };
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

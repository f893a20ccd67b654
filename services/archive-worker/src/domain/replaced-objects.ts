import type { ArchiveState } from '@screenfleet/contracts';
import type { ArchiveStore } from '@screenfleet/storage';
import { openKeysFor } from './archive-keys';
import {
  ArchiveObjectCorruptError,
  openBytes,
  type ArchiveKeyring,
  type EncodedChunk,
} from './chunk-codec';
import type { ManifestEntry } from './manifest';

/**
 * What these uploads add to the store: their sizes less what they replace. A chunk uploaded
 * before (by a worker that died or lost its lease before recording it) may already be there
 * under the same key: always its manifest, and unencrypted its chunk and media too. That copy
 * was counted when this worker took the lease (reconcile), so it must not be counted again.
 */
export async function addedBytes(
  archive: Pick<ArchiveStore, 'size'>,
  uploads: Array<{ key: string; sealed: EncodedChunk }>,
) {
  let bytes = 0;
  const overwritten = new Set<string>();
  for (const { key, sealed } of uploads) {
    const size = await archive.size(key);
    if (size !== null) overwritten.add(key);
    bytes += sealed.body.length - (size ?? 0);
  }
  return { bytes, overwritten };
}

/**
 * The objects an earlier upload of these same items named (its manifest is at the same key),
 * which this one replaces: an upload that died before it was recorded, or items archived
 * again after a restore. Encrypted, or with other media, their keys differ from this upload's,
 * and nothing names them once the new manifest is written. A manifest that cannot be read
 * replaces nothing (the sweep at the next takeover looks again).
 */
export async function replacedObjects(
  archive: Pick<ArchiveStore, 'get'>,
  keyring: ArchiveKeyring | undefined,
  state: ArchiveState,
  manifestKey: string,
  uploads: Array<{ key: string }>,
): Promise<Array<{ key: string; size: number }>> {
  try {
    const body = await archive.get(manifestKey);
    const opened = openBytes(body, openKeysFor(keyring, state), { name: manifestKey });
    const earlier = JSON.parse(opened.toString('utf8')) as ManifestEntry;
    const kept = new Set(uploads.map((upload) => upload.key));
    return [
      { key: earlier.chunk_key, size: earlier.size },
      ...earlier.media.map((media) => ({ key: media.key, size: media.size })),
    ].filter((object) => !kept.has(object.key));
  } catch (error) {
    if (error instanceof ArchiveObjectCorruptError || error instanceof SyntaxError) return [];
    throw error;
  }
}

/** Deletes what the new manifest replaced and says how many bytes that freed. */
export async function deleteReplaced(
  archive: Pick<ArchiveStore, 'size' | 'delete'>,
  replaced: Array<{ key: string; size: number }>,
): Promise<number> {
  let freed = 0;
  for (const object of replaced) {
    const size = await archive.size(object.key);
    if (size === null) continue;
    await archive.delete(object.key);
    freed += size;
  }
  return freed;
}

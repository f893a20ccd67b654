import type { ContentDocument } from '@screenfleet/storage';
import { sealBytes, type ArchiveKey, type EncodedChunk } from './chunk-codec';
import type { ManifestMedia, ManifestSkippedMedia } from './manifest';
import type { MediaCheck, MediaFiles } from './media-files';
import { describeError } from './media-cleanup';

/**
 * The chunk's media files under the root. A file that is missing, refused, or fails to check
 * (ELOOP, EACCES, ENAMETOOLONG...) is skipped, listed in the manifest and reported: one bad
 * file never stops the archive (every pass starts from the oldest item, so it would for ever).
 */
export async function collectMedia(
  media: MediaFiles | undefined,
  docs: readonly ContentDocument[],
) {
  const found: Array<{ filePath: string; realPath: string }> = [];
  const skipped: ManifestSkippedMedia[] = [];
  if (!media) return { found, skipped };
  // Not a per-file problem: a root that changed fails the pass (nothing is archived).
  await media.ready?.();
  const paths = [...new Set(docs.map((doc) => doc.file_path).filter((p) => p !== null))];
  for (const filePath of paths) {
    let check: MediaCheck;
    try {
      check = await media.check(filePath);
    } catch (error) {
      check = { kind: 'refused', reason: describeError(error) };
    }
    if (check.kind === 'inside') found.push({ filePath, realPath: check.realPath });
    else if (check.kind === 'missing') skipped.push({ file_path: filePath, reason: 'missing' });
    else skipped.push({ file_path: filePath, reason: 'refused', detail: check.reason });
  }
  return { found, skipped };
}

/** Reads and seals each file; one that fails to read joins the skipped ones. */
export async function sealMedia(
  media: MediaFiles | undefined,
  writer: ArchiveKey | undefined,
  found: Array<{ filePath: string; realPath: string }>,
  skipped: ManifestSkippedMedia[],
  mediaKey: (index: number, filePath: string, sha256: string) => string,
) {
  const sealedMedia: Array<{ entry: ManifestMedia; sealed: EncodedChunk }> = [];
  for (const [index, file] of found.entries()) {
    let bytes: Buffer;
    try {
      bytes = await media!.read(file.realPath);
    } catch (error) {
      skipped.push({ file_path: file.filePath, reason: 'refused', detail: describeError(error) });
      continue;
    }
    const sealed = sealBytes(bytes, writer);
    const key = mediaKey(index, file.filePath, sealed.sha256);
    sealedMedia.push({
      sealed,
      entry: { file_path: file.filePath, key, sha256: sealed.sha256, size: sealed.body.length },
    });
  }
  return sealedMedia;
}

import type { ContentStore } from '@screenfleet/storage';
import type { MediaFiles } from './media-files';

/**
 * Of these media files, those no stored item names any more: many frames share one video file,
 * which may go only once none does. Empty without a media root (nothing is ever deleted then).
 */
export async function unreferencedMedia(
  content: Pick<ContentStore, 'filePathsInUse'>,
  media: MediaFiles | undefined,
  paths: readonly string[],
): Promise<string[]> {
  if (!media || paths.length === 0) return [];
  const inUse = await content.filePathsInUse([...paths]);
  return paths.filter((filePath) => !inUse.has(filePath));
}

/**
 * Deletes these files where they are under the media root (checked again right before each
 * delete) and says how many went. One that cannot be removed is reported and left: the items
 * that named it are gone already, and a file is never worth failing their removal for.
 */
export async function removeMedia(
  media: MediaFiles | undefined,
  paths: readonly string[],
  notRemoved?: (file: { file_path: string; detail: string }) => void,
): Promise<number> {
  if (!media) return 0;
  let removed = 0;
  for (const filePath of paths) {
    try {
      const check = await media.check(filePath);
      if (check.kind !== 'inside') continue;
      await media.remove(check.realPath);
      removed += 1;
    } catch (error) {
      notRemoved?.({ file_path: filePath, detail: describeError(error) });
    }
  }
  return removed;
}

/** An error in one line: its code (ELOOP, EACCES...) and message. */
export function describeError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/** What the archive may do with an item's file_path. */
export type MediaCheck =
  /** Under the media root: `realPath` is the file to read and, once archived, delete. */
  | { kind: 'inside'; realPath: string; size: number }
  /** Refused: outside the root, through `..`, or a symlink out of it. Never read or deleted. */
  | { kind: 'refused'; reason: string }
  /** Nothing there (deleted already, or never written): the item is archived without it. */
  | { kind: 'missing' };

/**
 * The local media files, confined to the configured media root. The archive never touches a
 * path this does not call `inside`, and `remove` checks again right before it deletes.
 */
export interface MediaFiles {
  /**
   * Rejects when the root is no longer the directory it was at start (an unmounted or replaced
   * volume): every file would look missing, and the items would be archived without them.
   */
  ready?(): Promise<void>;
  check(filePath: string): Promise<MediaCheck>;
  read(realPath: string): Promise<Buffer>;
  remove(realPath: string): Promise<void>;
}

/** What happened to one archived media file on restore. */
export type MediaRestoreOutcome =
  /** Written back to its path. */
  | 'written'
  /** The same bytes are there already (a repeated restore). */
  | 'already'
  /** A different file is there: left as it is, the archived copy stays in the archive. */
  | 'conflict'
  /** Not a path the archive may write (outside the root, not in normal form, a symlink on it). */
  | 'refused';

/** Puts archived media files back under the media root; never overwrites, never outside it. */
export interface MediaWriter {
  restore(filePath: string, bytes: Buffer): Promise<MediaRestoreOutcome>;
}

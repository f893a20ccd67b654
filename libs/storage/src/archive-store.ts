/** One object the archive holds. */
export interface ArchiveObject {
  /** Relative to the store's prefix or root, with "/" separators (e.g. "chunks/2026/11/....json.gz"). */
  key: string;
  size: number;
}

/**
 * Where archived chunks and media files go: an S3-compatible bucket or a local directory. The
 * archive worker verifies every object before it deletes anything it came from, so `verify`
 * must really check what the store holds, never what the caller remembers sending.
 *
 * Errors meaning the store cannot be reached or refuses for now (network, 5xx, throttling)
 * reject with StoreUnavailableError; a missing object rejects with NotFoundError.
 */
export interface ArchiveStore {
  /** Creates the bucket or directory when missing; idempotent. Call at start-up. */
  ensureReady(): Promise<void>;
  /**
   * Writes (or overwrites) the object. `sha256` is the hex SHA-256 of `body`; a store that can
   * check it on arrival (S3 ChecksumSHA256) does, and refuses a body that does not match.
   */
  put(key: string, body: Buffer, options: { sha256: string }): Promise<void>;
  /**
   * True when the stored object has exactly this SHA-256 (hex): the store's own checksum where
   * it keeps one (S3 HeadObject with ChecksumMode), else the object read back and hashed.
   * False when it differs or the object is missing.
   */
  verify(key: string, sha256: string): Promise<boolean>;
  /** The stored object's size in bytes; null when there is none (a put would add, not replace). */
  size(key: string): Promise<number | null>;
  /** The object's bytes; NotFoundError when missing. */
  get(key: string): Promise<Buffer>;
  /** Objects whose key starts with `prefix` ("" for all), in key order. */
  list(prefix: string): AsyncIterable<ArchiveObject>;
  /** Removes the object; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Removes what writes that never finished left (a process killed mid-put): the filesystem
   * store's hidden temp files, which `list` does not show; an S3 PutObject is all or nothing, so
   * there is nothing there. A put still running when its temp file goes fails (nothing is half
   * written), so call it only when no write of this archive should be running (the task lease).
   */
  removeUnfinished(): Promise<{ count: number; bytes: number }>;
  close(): Promise<void>;
}

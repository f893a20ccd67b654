import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';

/**
 * Data at rest belongs to its owner (ARCHITECTURE.md, Security): every captured screen's text is
 * in the data and archive directories, so they are created 0700 and what goes in them 0600,
 * whatever the umask, and a start that finds one open to other users refuses with the fix, as
 * the gateway does for its token file. A directory is checked, not its files: once only its
 * owner can enter it, nothing below it can be read by anyone else, whatever the files' modes.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` (and its missing parents) 0700, or accepts an existing one that no other user
 * may read, enter or write (no group or other bit). `what` names it in the error, e.g.
 * "data directory (DATA_DIR)". Throws, changing nothing, when it is open to others.
 */
export function ensurePrivateDir(dir: string, what: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (error) {
    // A file of that name: said below, in words.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const info = statSync(dir);
  if (!info.isDirectory()) throw new Error(`${what} ${dir} is not a directory`);
  const mode = info.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new Error(
      `${what} ${dir} is open to other users (mode ${mode.toString(8)}): run chmod 700 ${dir}`,
    );
  }
}

/**
 * Creates `file` empty with mode 0600 when it is missing, so that what opens it afterwards keeps
 * that mode (SQLite also gives its -wal and -shm files the main file's mode). An existing file is
 * left as it is.
 */
export function ensurePrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
}

import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir } from '@screenfleet/runtime';
import { generateToken, scopes, type TokenEntry } from './tokens';

export interface LocalToken {
  entry: TokenEntry;
  file: string;
  /** True when this start generated it: the one time it is shown on the terminal. */
  created: boolean;
}

/** Same rule as GATEWAY_TOKENS: shorter is guessable. */
const MIN_TOKEN_LENGTH = 16;

/**
 * With no tokens configured, one local token with every scope, kept in the data directory so
 * a restart keeps it (clients need not be reconfigured). The file holds a secret that can press
 * keys: one that other users can read is refused (the fix is in the message), one that is empty
 * (holds no secret yet, e.g. created by `touch`) gets a new token.
 */
export function loadOrCreateLocalToken(dataDir: string): LocalToken {
  const file = path.join(dataDir, 'gateway-token');
  const existing = readTokenFile(file);
  if (existing) return { entry: entryOf(existing), file, created: false };
  ensurePrivateDir(dataDir, 'data directory (DATA_DIR)');
  const token = generateToken();
  // Written 0600 under another name, then renamed: never readable by others, never half-written.
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${token}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(temporary, file);
  return { entry: entryOf(token), file, created: true };
}

/** The token in `file`; undefined when there is none yet (no file, or an empty one). */
function readTokenFile(file: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const token = readFileSync(file, 'utf8').trim();
  if (!token) return undefined;
  if ((mode & 0o077) !== 0) {
    throw new Error(
      `${file} is readable by other users (mode ${(mode & 0o777).toString(8)}): run chmod 600 ${file}, or delete it to get a new token`,
    );
  }
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    throw new Error(
      `${file} does not hold a valid token (one line of at least ${MIN_TOKEN_LENGTH} characters): delete it to get a new token`,
    );
  }
  return token;
}

function entryOf(token: string): TokenEntry {
  return { id: 'local', token, scopes };
}

/** What the terminal shows when a local token was just made (stderr, not the JSON logs). */
export function localTokenBanner({ entry, file }: LocalToken): string {
  return `\nNo GATEWAY_TOKENS: generated a local token with every scope, kept in ${file}:\n\n    ${entry.token}\n\nUse it as "Authorization: Bearer <token>". It is shown only this once; read it from the file later.\n\n`;
}

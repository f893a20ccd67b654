import { unwatchFile, watchFile, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * How `npm run tokens` tells a running embedded process that it changed the tokens in the data
 * directory's file (ADR 0019): it rewrites this file, which the process watches and turns into
 * a tokens.changed event on its in-process bus. There is no broker between the two processes,
 * and a gateway's 30-second reload would be too late for a revocation.
 */
export const tokensChangedFile = (dataDir: string) =>
  path.join(path.resolve(dataDir), 'tokens-changed');

/** Polled, not inotify: it works whether or not the file exists yet, on every file system. */
const POLL_MS = 200;

export function signalTokensChanged(dataDir: string): void {
  writeFileSync(tokensChangedFile(dataDir), `${new Date().toISOString()}\n`, { mode: 0o600 });
}

/** Calls `changed` each time the file is written; returns the stop. */
export function watchTokensChanged(dataDir: string, changed: () => void): () => void {
  const file = tokensChangedFile(dataDir);
  const listener = (now: { mtimeMs: number }, before: { mtimeMs: number }) => {
    if (now.mtimeMs !== before.mtimeMs && now.mtimeMs !== 0) changed();
  };
  watchFile(file, { interval: POLL_MS, persistent: false }, listener);
  return () => unwatchFile(file, listener);
}

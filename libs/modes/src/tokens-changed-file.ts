import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * How `npm run tokens` tells a running embedded process that it changed the tokens in the data
 * directory's file (ADR 0019): it rewrites this file, which the process watches and turns into
 * a tokens.changed event on its in-process bus. There is no broker between the two processes,
 * and a gateway's 30-second reload would be too late for a revocation.
 */
export const tokensChangedFile = (dataDir: string) =>
  path.join(path.resolve(dataDir), 'tokens-changed');

/**
 * Polled, not inotify: it works whether or not the file exists yet, on every file system. Our
 * own poll rather than fs.watchFile, whose first look is asynchronous: a write made just after
 * the watch began could become its starting point and never be seen.
 */
const POLL_MS = 200;

export function signalTokensChanged(dataDir: string): void {
  writeFileSync(tokensChangedFile(dataDir), `${new Date().toISOString()}\n`, { mode: 0o600 });
}

/** Calls `changed` each time the file is written after this call; returns the stop. */
export function watchTokensChanged(dataDir: string, changed: () => void): () => void {
  const file = tokensChangedFile(dataDir);
  const modified = () => statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  let seen = modified();
  const timer = setInterval(() => {
    const now = modified();
    if (now === seen) return;
    seen = now;
    changed();
  }, POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

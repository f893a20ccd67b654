import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateToken, scopes, type TokenEntry } from './tokens';

/**
 * With no tokens configured, one local token with every scope, kept in the data directory so
 * a restart keeps it (clients need not be reconfigured).
 */
export function loadOrCreateLocalToken(dataDir: string): TokenEntry {
  const file = path.join(dataDir, 'gateway-token');
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch {
    mkdirSync(dataDir, { recursive: true });
    token = generateToken();
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return { id: 'local', token, scopes };
}

import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The key pair operator commands are signed with (the gateway holds the private key, agents the
 * public one), made on the first start in the data directory and kept: a restart keeps them.
 * The private key file is mode 0600; a group- or world-readable one is refused.
 */
export function ensureOperatorKeys(dataDir: string): { privateKey: string; publicKey: string } {
  const dir = path.join(dataDir, 'operator-keys');
  const privateKey = path.join(dir, 'command-signing.key.pem');
  const publicKey = path.join(dir, 'command-signing.pub.pem');
  if (!existsSync(privateKey) || !existsSync(publicKey)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const pair = generateKeyPairSync('ed25519');
    writeFileSync(privateKey, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), {
      mode: 0o600,
    });
    chmodSync(privateKey, 0o600);
    // Not secret, but the data directory's files are its owner's only, like everything in it.
    writeFileSync(publicKey, pair.publicKey.export({ type: 'spki', format: 'pem' }), {
      mode: 0o600,
    });
  }
  if ((statSync(privateKey).mode & 0o077) !== 0) {
    throw new Error(`${privateKey} is readable by others: chmod 600 it`);
  }
  return { privateKey, publicKey };
}

import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Envelope } from './messages/envelope';

/**
 * Operator commands are signed by the gateway (Ed25519) and verified by the agent, so a broker
 * client that can publish to the operator exchange cannot make an agent press keys. The
 * signature covers the device the command is for (its routing key): a command signed for one
 * desktop is refused by every other.
 */

/** JSON with object keys sorted at every level: the same value always gives the same bytes. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The bytes a command's signature covers: every envelope field but the signature, and the device. */
export function commandSigningBytes(envelope: Envelope, device: string): Buffer {
  const { signature: _ignored, ...signed } = envelope;
  return Buffer.from(canonicalJson({ device, envelope: signed }), 'utf8');
}

/** The envelope with its signature (base64) for `device`. */
export function signCommand<T>(envelope: Envelope<T>, device: string, key: KeyObject): Envelope<T> {
  const signature = sign(null, commandSigningBytes(envelope, device), key).toString('base64');
  return { ...envelope, signature };
}

/** True when the envelope carries a valid signature of `key` for `device`. */
export function verifyCommand(envelope: Envelope, device: string, key: KeyObject): boolean {
  if (typeof envelope.signature !== 'string' || envelope.signature.length > 200) return false;
  try {
    return verify(
      null,
      commandSigningBytes(envelope, device),
      key,
      Buffer.from(envelope.signature, 'base64'),
    );
  } catch {
    return false;
  }
}

/** A PEM given inline, or the path of a file holding it. */
function pemOf(value: string): string {
  return value.includes('-----BEGIN') ? value : readFileSync(value, 'utf8');
}

/** The gateway's Ed25519 private key from a PEM or a path (GATEWAY_OPERATOR_SIGNING_KEY). */
export function loadSigningKey(value: string): KeyObject {
  const key = createPrivateKey(pemOf(value));
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the signing key is not Ed25519');
  return key;
}

/** The agent's Ed25519 public key from a PEM or a path (OPERATOR_COMMAND_PUBLIC_KEY). */
export function loadVerifyKey(value: string): KeyObject {
  const key = createPublicKey(pemOf(value));
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the public key is not Ed25519');
  return key;
}

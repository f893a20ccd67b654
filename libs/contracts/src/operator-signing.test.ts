import { generateKeyPairSync } from 'node:crypto';
import { createEnvelope } from './messages/envelope';
import { commandSigningBytes, signCommand, verifyCommand } from './operator-signing';

describe('operator command signatures', () => {
  const gateway = generateKeyPairSync('ed25519');
  const other = generateKeyPairSync('ed25519');
  const command = createEnvelope('operator.command', { action: 'press', key: 'a', modifiers: [] });

  it('when the gateway signed a command for a device, then that device verifies it', () => {
    const signed = signCommand(command, 'desk-1', gateway.privateKey);
    expect(verifyCommand(signed, 'desk-1', gateway.publicKey)).toBe(true);
  });

  it('when a command is unsigned, signed by another key, for another device, or altered, then it fails', () => {
    const signed = signCommand(command, 'desk-1', gateway.privateKey);
    expect(verifyCommand(command, 'desk-1', gateway.publicKey)).toBe(false);
    expect(
      verifyCommand(signCommand(command, 'desk-1', other.privateKey), 'desk-1', gateway.publicKey),
    ).toBe(false);
    expect(verifyCommand(signed, 'desk-2', gateway.publicKey)).toBe(false);
    const altered = { ...signed, payload: { ...signed.payload, key: 'b' } };
    expect(verifyCommand(altered, 'desk-1', gateway.publicKey)).toBe(false);
    expect(
      verifyCommand({ ...signed, sent_at: new Date(0).toISOString() }, 'desk-1', gateway.publicKey),
    ).toBe(false);
    expect(verifyCommand({ ...signed, signature: 'garbage' }, 'desk-1', gateway.publicKey)).toBe(
      false,
    );
  });

  it('when key order differs, then the signed bytes are the same', () => {
    const reordered = { ...command, payload: { modifiers: [], key: 'a', action: 'press' } };
    expect(commandSigningBytes(reordered, 'd').equals(commandSigningBytes(command, 'd'))).toBe(
      true,
    );
  });
});

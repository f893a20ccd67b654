import { generateKeyPairSync } from 'node:crypto';
import { createEnvelope, signCommand } from '@screenfleet/contracts';
import { CommandGuard, MAX_CLOCK_SKEW_MS } from './command-guard';

describe('command guard', () => {
  const keys = generateKeyPairSync('ed25519');
  let wall = Date.parse('2030-01-01T00:00:00.000Z');
  let mono = 0;
  const guard = new CommandGuard(keys.publicKey, 'desk-1', {
    wall: () => wall,
    monotonic: () => mono,
  });
  const signed = (sentAt = wall) =>
    signCommand(
      createEnvelope('operator.command', { action: 'list' }, { now: new Date(sentAt) }),
      'desk-1',
      keys.privateKey,
    );

  it('when a signed command arrives once, then it passes; the same message id again is a replay', () => {
    const command = signed();
    expect(() => guard.assertSigned(command)).not.toThrow();
    expect(() => guard.assertFresh(command, 5000)).not.toThrow();
    expect(() => guard.assertFresh(command, 5000)).toThrow(/refused \(replayed\)/);
  });

  it('when a command is older than its timeout plus the clock tolerance, or too far ahead, then it is expired', () => {
    expect(() => guard.assertFresh(signed(wall - 5000 - MAX_CLOCK_SKEW_MS - 1), 5000)).toThrow(
      /refused \(expired\)/,
    );
    expect(() => guard.assertFresh(signed(wall + MAX_CLOCK_SKEW_MS + 1), 5000)).toThrow(
      /refused \(expired\)/,
    );
    // A clock 3 s behind the gateway's is well within the tolerance.
    expect(() => guard.assertFresh(signed(wall + 3000), 5000)).not.toThrow();
  });

  it('when a message id is remembered past its window, then it is forgotten (and would be expired by age)', () => {
    const command = signed();
    guard.assertFresh(command, 5000);
    mono += 5000 + 2 * MAX_CLOCK_SKEW_MS + 1;
    wall += 5000 + 2 * MAX_CLOCK_SKEW_MS + 1;
    expect(() => guard.assertFresh(command, 5000)).toThrow(/refused \(expired\)/);
  });

  it('when a command is unsigned, then it is refused before its payload is read', () => {
    expect(() =>
      guard.assertSigned(createEnvelope('operator.command', { action: 'list' })),
    ).toThrow(/refused \(unsigned\)/);
  });
});

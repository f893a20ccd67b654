import { ConflictError } from '@screenfleet/contracts';
import { enrolRefusal, tokenConflict } from './token-store';

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 29, 9, 0, seconds));
const live = { revokedAt: null, expiresAt: at(10), uses: 2, usesTaken: 1 };

describe('enrolRefusal', () => {
  it('when the code is live (not revoked, before its expiry, a use left), then nothing refuses it', () => {
    expect(enrolRefusal(live, at(9))).toBeNull();
    expect(enrolRefusal({ ...live, expiresAt: null }, at(9_999))).toBeNull();
  });

  it('when the time reaches the expiry, then it is expired (the expiry itself included)', () => {
    expect(enrolRefusal(live, at(10))).toBe('expired');
    expect(enrolRefusal(live, at(11))).toBe('expired');
  });

  it('when every use is taken, then it is used up', () => {
    expect(enrolRefusal({ ...live, usesTaken: 2 }, at(1))).toBe('used_up');
  });

  it('when several reasons hold, then revoked comes before expired, and expired before used up', () => {
    const everything = { revokedAt: at(1), expiresAt: at(2), uses: 1, usesTaken: 1 };
    expect(enrolRefusal(everything, at(3))).toBe('revoked');
    expect(enrolRefusal({ ...everything, revokedAt: null }, at(3))).toBe('expired');
  });
});

describe('tokenConflict', () => {
  it('when the id or a hash is taken, then a ConflictError says which', () => {
    const byId = tokenConflict('token', 'tok_1', 'id');
    expect(byId).toBeInstanceOf(ConflictError);
    expect(byId.code).toBe('conflict');
    expect(byId.message).toBe('token tok_1 not stored: one with this id is stored already');
    expect(tokenConflict('enrolment code', 'enr_1', 'codeHash').message).toBe(
      'enrolment code enr_1 not stored: another one has the same codeHash',
    );
  });
});

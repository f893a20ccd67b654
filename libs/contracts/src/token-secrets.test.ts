import { createHash } from 'node:crypto';
import { newEnrolmentCode, newTokenSecret, secretHash } from './token-secrets';
import { validators } from './registry';

describe('token secrets', () => {
  it('when a token is made, then its secret has the sf_ prefix and 32 random bytes, and its hash is the SHA-256 of the secret', () => {
    const made = newTokenSecret();
    expect(made.id).toMatch(/^tok_[0-9a-f]{16}$/);
    expect(made.secret).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(made.secret.slice(3), 'base64url')).toHaveLength(32);
    expect(made.secretHash).toBe(createHash('sha256').update(made.secret).digest('hex'));
    expect(secretHash(made.secret)).toBe(made.secretHash);
  });

  it('when two are made, then they share nothing', () => {
    const [a, b] = [newTokenSecret(), newTokenSecret()];
    expect(a.id).not.toBe(b.id);
    expect(a.secret).not.toBe(b.secret);
  });

  it('when a code is made, then it matches what POST /enrolment-codes answers', () => {
    const made = newEnrolmentCode();
    expect(made.id).toMatch(/^enr_[0-9a-f]{16}$/);
    expect(made.codeHash).toBe(secretHash(made.code));
    const answer = {
      code: {
        id: made.id,
        name: 'lab',
        scopes: ['ingest'],
        device_pattern: 'lab-*',
        uses: 1,
        uses_left: 1,
        created_at: '2026-11-29T10:00:00.000Z',
        expires_at: null,
        revoked_at: null,
      },
      secret: made.code,
    };
    expect(validators.enrolmentCodeCreated.check(answer)).toEqual([]);
  });
});

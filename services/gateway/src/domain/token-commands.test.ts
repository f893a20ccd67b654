import { createHash } from 'node:crypto';
import {
  AppError,
  ValidationError,
  createEnvelope,
  validators,
  type Envelope,
  type TokensReply,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import {
  askTokens,
  enrolmentCodeIdOf,
  EnrolmentRefusedError,
  parseIncludeRevoked,
  toCreateEnrolmentCode,
  toCreateToken,
  toEnrol,
  tokenIdOf,
} from './token-commands';

const NOW = Date.parse('2026-11-29T10:00:00Z');
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function rejection(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    return error as AppError;
  }
  throw new Error('expected it to throw');
}

/** A bus whose one worker answers `reply`, and the requests it was sent. */
function busAnswering(reply: TokensReply) {
  const sent: Envelope[] = [];
  const bus: Pick<Bus, 'call'> = {
    call: <Res>(_queue: string, request: Envelope) => {
      sent.push(request);
      return Promise.resolve(
        createEnvelope('tokens.reply', reply, {
          correlationId: request.correlation_id,
        }) as Envelope<Res>,
      );
    },
  };
  return { bus, sent };
}

describe('token commands', () => {
  it('when a token is created, then the secret is sf_ + 43 base64url characters and only its SHA-256 goes to the worker', () => {
    const { request, secret } = toCreateToken(
      { name: 'desk-17', scopes: ['ingest'], devices: ['desk-17'] },
      'admin-1',
      NOW,
    );

    expect(secret).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);
    expect(request).toEqual({
      op: 'create',
      actor: 'admin-1',
      id: expect.stringMatching(/^tok_[0-9a-f]{16}$/),
      name: 'desk-17',
      scopes: ['ingest'],
      devices: ['desk-17'],
      expires_at_ms: null,
      rate_limits: null,
      secret_hash: sha256(secret),
    });
    expect(JSON.stringify(request)).not.toContain(secret);
    expect(validators.tokensRequest.check(request)).toEqual([]);
  });

  it('when two tokens are created, then their secrets and ids differ', () => {
    const a = toCreateToken({ name: 'a', scopes: ['ingest'] }, 'admin', NOW);
    const b = toCreateToken({ name: 'a', scopes: ['ingest'] }, 'admin', NOW);
    expect(a.secret).not.toBe(b.secret);
    expect(a.request).not.toMatchObject({ id: (b.request as { id: string }).id });
  });

  it('when expires_at is given, then it travels as milliseconds; when it is past, then a 400 names it', () => {
    const { request } = toCreateToken(
      { name: 'a', scopes: ['ingest'], expires_at: '2026-11-30T12:00:00+02:00' },
      'admin',
      NOW,
    );
    expect(request).toMatchObject({ expires_at_ms: Date.parse('2026-11-30T10:00:00Z') });

    const error = rejection(() =>
      toCreateToken(
        { name: 'a', scopes: ['ingest'], expires_at: '2026-11-29T09:59:59Z' },
        'admin',
        NOW,
      ),
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.fieldErrors).toEqual([
      expect.objectContaining({ path: 'expires_at', rule: 'future' }),
    ]);
  });

  it('when an enrolment code is created, then it is sfe_ + 43 characters and only its hash is sent', () => {
    const { request, secret } = toCreateEnrolmentCode(
      { name: 'lab', scopes: ['ingest'], device_pattern: 'lab-*', uses: 5 },
      'admin',
      NOW,
    );
    expect(secret).toMatch(/^sfe_[A-Za-z0-9_-]{43}$/);
    expect(request).toMatchObject({
      op: 'create_code',
      id: expect.stringMatching(/^enr_[0-9a-f]{16}$/),
      code_hash: sha256(secret),
    });
    expect(validators.tokensRequest.check(request)).toEqual([]);
  });

  it('when a device enrols, then the code and the new secret travel as hashes', () => {
    const code = `sfe_${'A'.repeat(43)}`;
    const { request, secret } = toEnrol({ code, device_name: 'lab-17' });
    expect(request).toEqual({
      op: 'enrol',
      code_hash: sha256(code),
      device_name: 'lab-17',
      token_id: expect.stringMatching(/^tok_[0-9a-f]{16}$/),
      secret_hash: sha256(secret),
    });
    expect(JSON.stringify(request)).not.toContain(code);
  });

  it('when include_revoked is true, false or absent, then it is read; else a 400 names it', () => {
    expect(parseIncludeRevoked({})).toBe(false);
    expect(parseIncludeRevoked({ include_revoked: 'false' })).toBe(false);
    expect(parseIncludeRevoked({ include_revoked: 'true' })).toBe(true);
    expect(rejection(() => parseIncludeRevoked({ include_revoked: 'yes' })).fieldErrors).toEqual([
      expect.objectContaining({ path: 'query.include_revoked', rule: 'enum' }),
    ]);
    expect(
      rejection(() => parseIncludeRevoked({ include_revoked: ['true', 'true'] })).fieldErrors,
    ).toEqual([expect.objectContaining({ path: 'query.include_revoked', rule: 'repeated' })]);
  });

  it('when an id is malformed, then it is the unknown id 404', () => {
    expect(tokenIdOf('tok_0123456789abcdef')).toBe('tok_0123456789abcdef');
    expect(rejection(() => tokenIdOf('tok_XYZ')).code).toBe('not_found');
    expect(rejection(() => enrolmentCodeIdOf('tok_0123456789abcdef')).code).toBe('not_found');
  });

  it.each([
    ['not_found', 'not_found'],
    ['conflict', 'conflict'],
    ['validation_failed', 'bad_gateway'],
    ['store_unavailable', 'store_unavailable'],
    ['failed', 'operation_failed'],
  ] as const)('when the worker refuses with %s, then the client sees %s', async (refusal, code) => {
    const { bus } = busAnswering({ outcome: 'refused', code: refusal, message: 'no' });
    await expect(
      askTokens(bus, { op: 'revoke', actor: 'a', id: 'tok_0123456789abcdef' }, 'token', {
        timeoutMs: 100,
        requestId: 'r',
      }),
    ).rejects.toMatchObject({ code });
  });

  it('when the worker refuses an enrolment, then its reason is the error', async () => {
    const { bus } = busAnswering({
      outcome: 'refused',
      code: 'enrolment_code_used_up',
      message: 'x',
    });
    const asked = askTokens(
      bus,
      toEnrol({ code: 'sfe_x', device_name: 'lab-1' }).request,
      'token',
      {
        timeoutMs: 100,
        requestId: 'r',
      },
    );
    await expect(asked).rejects.toBeInstanceOf(EnrolmentRefusedError);
    await expect(asked).rejects.toMatchObject({ code: 'enrolment_code_used_up' });
  });

  it('when the worker answers another kind, then it is a 502', async () => {
    const { bus, sent } = busAnswering({ outcome: 'recorded' });
    await expect(
      askTokens(bus, { op: 'list', include_revoked: false }, 'tokens', {
        timeoutMs: 100,
        requestId: 'req-7',
      }),
    ).rejects.toMatchObject({ code: 'bad_gateway' });
    expect(sent[0]).toMatchObject({ type: 'tokens.request', correlation_id: 'req-7' });
  });
});

import {
  ConflictError,
  NotFoundError,
  StoreUnavailableError,
  validators,
} from '@screenfleet/contracts';
import {
  enrolRefusal,
  type AuditRow,
  type EnrolmentCode,
  type NewEnrolmentCode,
  type StoredToken,
  type TokenStore,
} from '@screenfleet/storage';
import { createTokenAdmin, type TokenAdminDeps } from './token-admin';

// Fakes with the port's semantics that matter here (conflicts, first revocation kept, makeToken
// called before a use is taken): the real adapters' contract suites prove those.
function memoryTokens() {
  const tokens = new Map<string, StoredToken>();
  const codes = new Map<string, EnrolmentCode>();
  const store: Omit<TokenStore, 'ensureSchema' | 'close'> = {
    insertToken(token) {
      if (
        tokens.has(token.id) ||
        [...tokens.values()].some((t) => t.secretHash === token.secretHash)
      )
        return Promise.reject(new ConflictError(`token ${token.id} not stored`));
      tokens.set(token.id, structuredClone(token));
      return Promise.resolve();
    },
    listTokens: ({ includeRevoked = false } = {}) =>
      Promise.resolve(
        [...tokens.values()]
          .filter((t) => includeRevoked || !t.revokedAt)
          .map((t) => structuredClone(t)),
      ),
    revokeToken(id, at) {
      const token = tokens.get(id);
      if (!token) return Promise.resolve(null);
      token.revokedAt ??= at;
      return Promise.resolve(structuredClone(token));
    },
    recordLastUse(uses) {
      for (const { id, at } of uses) {
        const token = tokens.get(id);
        if (token && (!token.lastUsedAt || token.lastUsedAt < at)) token.lastUsedAt = at;
      }
      return Promise.resolve();
    },
    insertEnrolmentCode(code: NewEnrolmentCode) {
      if (codes.has(code.id)) return Promise.reject(new ConflictError(`code ${code.id}`));
      codes.set(code.id, { ...structuredClone(code), usesTaken: 0, revokedAt: null });
      return Promise.resolve();
    },
    listEnrolmentCodes: ({ includeRevoked = false } = {}) =>
      Promise.resolve(
        [...codes.values()]
          .filter((c) => includeRevoked || !c.revokedAt)
          .map((c) => structuredClone(c)),
      ),
    revokeEnrolmentCode(id, at) {
      const code = codes.get(id);
      if (!code) return Promise.resolve(null);
      code.revokedAt ??= at;
      return Promise.resolve(structuredClone(code));
    },
    async enrol(codeHash, at, makeToken) {
      const code = [...codes.values()].find((c) => c.codeHash === codeHash);
      if (!code) return { ok: false, reason: 'unknown' };
      const refusal = enrolRefusal(code, at);
      if (refusal) return { ok: false, reason: refusal };
      const token = makeToken(structuredClone(code));
      await store.insertToken(token);
      code.usesTaken += 1;
      return { ok: true, token, code };
    },
  };
  return { store, tokens, codes };
}

const hash = (n: number) => n.toString(16).padStart(64, '0');
const tokenId = (n: number) => `tok_${n.toString(16).padStart(16, '0')}`;
const codeId = (n: number) => `enr_${n.toString(16).padStart(16, '0')}`;
const NOW = new Date('2026-11-29T10:00:00.000Z');

function setup(overrides: Partial<TokenAdminDeps> = {}) {
  const memory = memoryTokens();
  const rows: AuditRow[] = [];
  const reasons: string[] = [];
  const notWritten: AuditRow[] = [];
  const admin = createTokenAdmin({
    tokens: memory.store,
    audit: {
      insertRows: (added) => {
        rows.push(...added);
        return Promise.resolve({ inserted: added.length, alreadyStored: 0 });
      },
    },
    now: () => NOW,
    changed: (reason) => {
      reasons.push(reason);
    },
    observer: { auditWritten: () => undefined, auditNotWritten: (_, row) => notWritten.push(row) },
    ...overrides,
  });
  return { admin, memory, rows, reasons, notWritten };
}

const createRequest = (n: number, overrides: Record<string, unknown> = {}) => ({
  actor: 'tok_admin0000000001',
  id: tokenId(n),
  name: `desk-${n}`,
  scopes: ['search' as const],
  devices: null,
  expires_at_ms: null,
  rate_limits: null,
  secret_hash: hash(n),
  ...overrides,
});

const codeRequest = (n: number, overrides: Record<string, unknown> = {}) => ({
  actor: 'tok_admin0000000001',
  id: codeId(n),
  name: `lab ${n}`,
  scopes: ['ingest' as const, 'search' as const],
  device_pattern: 'desk-*',
  uses: 2,
  expires_at_ms: null,
  code_hash: hash(1000 + n),
  ...overrides,
});

describe('token admin', () => {
  it('when a token is created, then the snapshot holds it by hash with its limits in seconds, and the list shows it without the hash', async () => {
    const { admin, reasons } = setup();

    const view = await admin.create(
      createRequest(1, {
        devices: ['desk-1'],
        expires_at_ms: NOW.getTime() + 60_000,
        rate_limits: { search: { limit: 10, window_seconds: 60 } },
      }),
    );

    expect(view).toEqual({
      id: tokenId(1),
      name: 'desk-1',
      scopes: ['search'],
      devices: ['desk-1'],
      created_at: NOW.toISOString(),
      expires_at: new Date(NOW.getTime() + 60_000).toISOString(),
      last_used_at: null,
      revoked_at: null,
      rate_limits: { search: { limit: 10, window_seconds: 60 } },
    });
    expect(await admin.snapshot()).toEqual([
      {
        id: tokenId(1),
        scopes: ['search'],
        devices: ['desk-1'],
        expires_at_ms: NOW.getTime() + 60_000,
        rate_limits: { search: { limit: 10, window_seconds: 60 } },
        secret_hash: hash(1),
      },
    ]);
    expect(await admin.list({ include_revoked: false })).toEqual([view]);
    expect(reasons).toEqual(['token.create']);
  });

  it('when a token is revoked or has expired, then the snapshot leaves it out; the list shows the revoked one only when asked', async () => {
    const { admin, reasons } = setup();
    await admin.create(createRequest(1));
    await admin.create(createRequest(2, { expires_at_ms: NOW.getTime() }));
    await admin.create(createRequest(3, { expires_at_ms: NOW.getTime() + 1 }));

    const revoked = await admin.revoke({ actor: 'tok_admin0000000001', id: tokenId(1) });

    expect(revoked.revoked_at).toBe(NOW.toISOString());
    expect((await admin.snapshot()).map((t) => t.id)).toEqual([tokenId(3)]);
    expect((await admin.list({ include_revoked: false })).map((t) => t.id)).toEqual([
      tokenId(2),
      tokenId(3),
    ]);
    expect((await admin.list({ include_revoked: true })).map((t) => t.id)).toEqual([
      tokenId(1),
      tokenId(2),
      tokenId(3),
    ]);
    expect(reasons).toEqual(['token.create', 'token.create', 'token.create', 'token.revoke']);
  });

  it('when a change succeeds, then an audit row names the actor, the action and the token, never its hash', async () => {
    const { admin, rows } = setup();

    await admin.create(createRequest(1));
    await admin.revoke({ actor: 'tok_other00000000002', id: tokenId(1) });

    expect(rows).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
        at: NOW,
        actor: 'tok_admin0000000001',
        action: 'token.create',
        device: null,
        outcome: 'ok',
        outcomeCode: null,
        durationMs: null,
        details: {
          token_id: tokenId(1),
          name: 'desk-1',
          scopes: ['search'],
          devices: null,
          expires_at: null,
        },
      },
      expect.objectContaining({
        actor: 'tok_other00000000002',
        action: 'token.revoke',
        outcome: 'ok',
      }) as AuditRow,
    ]);
    expect(rows[0]!.id).not.toBe(rows[1]!.id);
    expect(JSON.stringify(rows)).not.toContain(hash(1));
  });

  it('when an id is unknown or stored already, then NotFoundError or ConflictError, with no audit row and no announcement', async () => {
    const { admin, rows, reasons } = setup();
    await admin.create(createRequest(1));
    rows.length = 0;
    reasons.length = 0;

    await expect(admin.create(createRequest(1))).rejects.toThrow(ConflictError);
    await expect(admin.revoke({ actor: 'a', id: tokenId(9) })).rejects.toThrow(NotFoundError);
    await expect(admin.revokeCode({ actor: 'a', id: codeId(9) })).rejects.toThrow(NotFoundError);

    expect(rows).toEqual([]);
    expect(reasons).toEqual([]);
  });

  it('when the store is down, then the error comes through unchanged', async () => {
    const down = () => Promise.reject(new StoreUnavailableError('token store unavailable'));
    const { admin, memory } = setup();
    memory.store.listTokens = down;

    await expect(admin.snapshot()).rejects.toThrow(StoreUnavailableError);
  });

  it('when the audit write fails after a change, then the change is still answered and announced, and the row goes to the observer', async () => {
    const { admin, reasons, notWritten, memory } = setup({
      audit: { insertRows: () => Promise.reject(new StoreUnavailableError('audit down')) },
    });

    const view = await admin.create(createRequest(1));

    expect(view.id).toBe(tokenId(1));
    expect(memory.tokens.has(tokenId(1))).toBe(true);
    expect(reasons).toEqual(['token.create']);
    expect(notWritten.map((row) => row.action)).toEqual(['token.create']);
  });

  it('when a code is created, listed and revoked, then its view counts uses left; revoking it announces nothing (no gateway holds codes)', async () => {
    const { admin, rows, reasons } = setup();

    const created = await admin.createCode(codeRequest(1, { uses: 3 }));
    expect(created).toEqual({
      id: codeId(1),
      name: 'lab 1',
      scopes: ['ingest', 'search'],
      device_pattern: 'desk-*',
      uses: 3,
      uses_left: 3,
      created_at: NOW.toISOString(),
      expires_at: null,
      revoked_at: null,
    });
    await admin.enrol({
      code_hash: hash(1001),
      device_name: 'desk-7',
      token_id: tokenId(7),
      secret_hash: hash(7),
    });
    expect((await admin.listCodes({ include_revoked: false }))[0]?.uses_left).toBe(2);

    const revoked = await admin.revokeCode({ actor: 'tok_admin0000000001', id: codeId(1) });

    expect(revoked.revoked_at).toBe(NOW.toISOString());
    expect(await admin.listCodes({ include_revoked: false })).toEqual([]);
    expect(await admin.listCodes({ include_revoked: true })).toEqual([revoked]);
    expect(rows.map((row) => row.action)).toEqual([
      'enrolment_code.create',
      'token.enrol',
      'enrolment_code.revoke',
    ]);
    expect(JSON.stringify(rows)).not.toContain(hash(1001));
    expect(reasons).toEqual(['enrolment_code.create', 'token.enrol']);
  });

  it("when a device enrols, then its token is named after it and the code, has the code's scopes, is bound to the device, never expires, and the audit row's actor is the code", async () => {
    const { admin, rows, memory } = setup();
    await admin.createCode(codeRequest(1));

    const enrolled = await admin.enrol({
      code_hash: hash(1001),
      device_name: 'desk-7',
      token_id: tokenId(7),
      secret_hash: hash(7),
    });

    expect(enrolled).toEqual({
      ok: true,
      token: expect.objectContaining({
        id: tokenId(7),
        name: 'desk-7 (lab 1)',
        scopes: ['ingest', 'search'],
        devices: ['desk-7'],
        expires_at: null,
        rate_limits: null,
      }) as unknown,
    });
    expect(memory.tokens.get(tokenId(7))?.secretHash).toBe(hash(7));
    expect(rows.at(-1)).toMatchObject({
      actor: `enrolment:${codeId(1)}`,
      action: 'token.enrol',
      device: 'desk-7',
      outcome: 'ok',
      details: { token_id: tokenId(7), code_id: codeId(1) },
    });
  });

  it('when a long device name enrols with a long code name, then the token name is cut to the 200 characters a name may have', async () => {
    const { admin } = setup();
    await admin.createCode({ ...codeRequest(1), name: 'c'.repeat(200), device_pattern: '*' });
    const device = '\u{1F5A5}'.repeat(50); // 200 bytes in UTF-8, 50 characters

    const enrolled = await admin.enrol({
      code_hash: hash(1001),
      device_name: device,
      token_id: tokenId(8),
      secret_hash: hash(8),
    });

    const name = enrolled.ok ? enrolled.token.name : '';
    expect(Array.from(name)).toHaveLength(200);
    expect(name.startsWith(`${device} (ccc`)).toBe(true);
    expect(enrolled.ok && validators.tokenView.check(structuredClone(enrolled.token))).toEqual([]);
  });

  it('when the device name does not match the pattern, then device_not_allowed, no use is taken, and a refused audit row names the code', async () => {
    const { admin, rows, memory, reasons } = setup();
    await admin.createCode(codeRequest(1, { uses: 1 }));

    const refused = await admin.enrol({
      code_hash: hash(1001),
      device_name: 'laptop-7',
      token_id: tokenId(7),
      secret_hash: hash(7),
    });

    expect(refused).toEqual({ ok: false, refusal: 'device_not_allowed' });
    expect(memory.codes.get(codeId(1))?.usesTaken).toBe(0);
    expect(memory.tokens.size).toBe(0);
    expect(rows.at(-1)).toEqual({
      id: expect.any(String) as string,
      at: NOW,
      actor: `enrolment:${codeId(1)}`,
      action: 'token.enrol',
      device: 'laptop-7',
      outcome: 'refused',
      outcomeCode: 'device_not_allowed',
      durationMs: null,
      details: { device_name: 'laptop-7' },
    });
    expect(reasons).toEqual(['enrolment_code.create']);
  });

  it.each([
    ['unknown', 'enrolment_code_invalid', 'enrolment:unknown'],
    ['revoked', 'enrolment_code_revoked', `enrolment:${codeId(1)}`],
    ['expired', 'enrolment_code_expired', `enrolment:${codeId(1)}`],
    ['used up', 'enrolment_code_used_up', `enrolment:${codeId(1)}`],
  ])(
    'when the code is %s, then %s, and the refused audit row names %s',
    async (state, refusal, actor) => {
      const { admin, rows } = setup();
      await admin.createCode(
        codeRequest(1, {
          uses: 1,
          ...(state === 'expired' ? { expires_at_ms: NOW.getTime() } : {}),
        }),
      );
      if (state === 'revoked') await admin.revokeCode({ actor: 'a', id: codeId(1) });
      const enrol = (n: number) =>
        admin.enrol({
          code_hash: state === 'unknown' ? hash(5) : hash(1001),
          device_name: `desk-${n}`,
          token_id: tokenId(n),
          secret_hash: hash(n),
        });
      if (state === 'used up') expect((await enrol(1)).ok).toBe(true);

      expect(await enrol(2)).toEqual({ ok: false, refusal });
      expect(rows.at(-1)).toMatchObject({
        actor,
        action: 'token.enrol',
        device: 'desk-2',
        outcome: 'refused',
        outcomeCode: refusal,
        details: { device_name: 'desk-2' },
      });
    },
  );

  it('when gateways report uses, then last_used_at moves forward only', async () => {
    const { admin } = setup();
    await admin.create(createRequest(1));
    const later = NOW.getTime() + 5000;

    await admin.used({ uses: [{ id: tokenId(1), at_ms: later }] });
    await admin.used({
      uses: [
        { id: tokenId(1), at_ms: later - 1000 },
        { id: tokenId(9), at_ms: later },
      ],
    });

    expect((await admin.list({ include_revoked: false }))[0]?.last_used_at).toBe(
      new Date(later).toISOString(),
    );
  });
});

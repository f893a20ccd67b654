import { createHash, randomBytes } from 'node:crypto';
import { ConflictError } from '@screenfleet/contracts';
import type {
  EnrolmentCode,
  EnrolResult,
  NewEnrolmentCode,
  StoredToken,
  TokenStore,
} from '@screenfleet/storage';
import { rejection, storesPerTest } from './contract-support';

/** What an adapter's test file hands the contract: one empty place, opened as often as needed. */
export interface TokenStoreFixture {
  /** A new store (its own connection) over the same place: a second worker. */
  open(): TokenStore;
  /** Everything the place holds, as text (every collection's documents, every table's rows). */
  storedText(): Promise<string>;
  /** Removes everything the place holds. */
  cleanup(): Promise<void>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** A secret as the ADR makes them: only its hash ever reaches the store. */
const newSecret = (prefix = 'sf_') => prefix + randomBytes(32).toString('base64url');

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 29, 9, 0, seconds, 123));

let made = 0;
export function buildToken(overrides: Partial<StoredToken> = {}): StoredToken {
  made += 1;
  return {
    id: `tok_${made.toString(16).padStart(4, '0')}${randomBytes(6).toString('hex')}`,
    name: `desktop ${made}`,
    scopes: ['ingest'],
    devices: null,
    createdAt: at(made % 60),
    expiresAt: null,
    lastUsedAt: null,
    revokedAt: null,
    secretHash: sha256(newSecret()),
    rateLimits: null,
    ...overrides,
  };
}

export function buildCode(overrides: Partial<NewEnrolmentCode> = {}): NewEnrolmentCode {
  made += 1;
  return {
    id: `enr_${made.toString(16).padStart(4, '0')}${randomBytes(6).toString('hex')}`,
    name: `office ${made}`,
    scopes: ['ingest', 'search'],
    devicePattern: 'office-*',
    uses: 3,
    createdAt: at(made % 60),
    expiresAt: null,
    codeHash: sha256(newSecret('sfe_')),
    ...overrides,
  };
}

/** The token an enrol makes from its code: bound to one device, the code's scopes. */
const tokenFor = (device: string) => (code: EnrolmentCode) =>
  buildToken({ name: `${code.name}: ${device}`, scopes: code.scopes, devices: [device] });

/**
 * What every TokenStore adapter must do (the port's doc comments in src/token-store.ts are the
 * contract). `makeFixture` returns an empty place each time.
 */
export function describeTokenStoreContract(
  name: string,
  makeFixture: () => Promise<TokenStoreFixture>,
): void {
  describe(`TokenStore contract: ${name}`, () => {
    const { open, fixture } = storesPerTest(makeFixture);

    describe('tokens', () => {
      it('when tokens are inserted, then another connection lists them oldest first with every field intact, Dates as Dates', async () => {
        const store = open();
        const bound = buildToken({
          createdAt: new Date('2026-11-29T08:00:00.001Z'),
          scopes: ['ingest', 'search', 'operator'],
          devices: ['office-1', 'office-2'],
          expiresAt: new Date('2027-01-01T00:00:00.999Z'),
        });
        const anyDevice = buildToken({ createdAt: new Date('2026-11-28T08:00:00.000Z') });
        const noScopes = buildToken({ createdAt: bound.createdAt, scopes: [], devices: [] });
        for (const token of [bound, anyDevice, noScopes]) await store.insertToken(token);

        const listed = await open().listTokens();

        const sameTime = [bound, noScopes].sort((a, b) => (a.id < b.id ? -1 : 1));
        expect(listed).toEqual([anyDevice, ...sameTime]);
        expect(listed[0]!.createdAt).toBeInstanceOf(Date);
        expect(listed.find((token) => token.id === bound.id)!.expiresAt).toEqual(bound.expiresAt);
      });

      it('when a token has its own rate limits, then another connection gets them back as given, one with null gets null, and revoking or a last use keeps them', async () => {
        const store = open();
        const limited = buildToken({
          rateLimits: {
            ingest: { limit: 120_000, windowMs: 60_000 },
            search: { limit: 30, windowMs: 1_000 },
            admin: { limit: 1, windowMs: 86_400_000 },
          },
        });
        const oneClass = buildToken({ rateLimits: { operator: { limit: 5, windowMs: 10_000 } } });
        const defaults = buildToken({ rateLimits: null });
        for (const token of [limited, oneClass, defaults]) await store.insertToken(token);

        const other = open();
        const listed = await other.listTokens();
        const byId = (id: string) => listed.find((token) => token.id === id);
        expect(byId(limited.id)).toEqual(limited);
        expect(byId(oneClass.id)!.rateLimits).toEqual({ operator: { limit: 5, windowMs: 10_000 } });
        expect(byId(defaults.id)!.rateLimits).toBeNull();

        await other.recordLastUse([{ id: limited.id, at: at(30) }]);
        expect(await store.revokeToken(limited.id, at(31))).toEqual({
          ...limited,
          lastUsedAt: at(30),
          revokedAt: at(31),
        });
      });

      it('when a token with a stored id or secret hash is inserted, then it is refused with ConflictError and nothing of it is stored', async () => {
        const store = open();
        const first = buildToken();
        await store.insertToken(first);

        const sameId = await rejection(store.insertToken(buildToken({ id: first.id })));
        const sameHash = await rejection(
          open().insertToken(buildToken({ secretHash: first.secretHash })),
        );

        expect(sameId).toBeInstanceOf(ConflictError);
        expect((sameId as Error).message).toMatch(/id is stored already/);
        expect(sameHash).toBeInstanceOf(ConflictError);
        expect((sameHash as Error).message).toMatch(/same secretHash/);
        expect(await store.listTokens({ includeRevoked: true })).toEqual([first]);
      });

      it('when 6 tokens with one secret hash are inserted at once on 2 connections, then exactly one is stored', async () => {
        const [a, b] = [open(), open()];
        const secretHash = sha256(newSecret());
        const tokens = Array.from({ length: 6 }, () => buildToken({ secretHash }));

        const results = await Promise.allSettled(
          tokens.map((token, i) => (i % 2 ? a : b).insertToken(token)),
        );

        const stored = results.filter((result) => result.status === 'fulfilled');
        expect(stored).toHaveLength(1);
        for (const result of results) {
          if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(ConflictError);
        }
        const listed = await a.listTokens();
        expect(listed).toHaveLength(1);
        expect(listed[0]!.secretHash).toBe(secretHash);
      });

      it('when a token is revoked, then it is returned revoked, listed only when asked, and a second revocation keeps the first time', async () => {
        const store = open();
        const kept = buildToken();
        const revoked = buildToken();
        await store.insertToken(kept);
        await store.insertToken(revoked);

        expect(await store.revokeToken(revoked.id, at(10))).toEqual({
          ...revoked,
          revokedAt: at(10),
        });
        expect(await open().revokeToken(revoked.id, at(20))).toEqual({
          ...revoked,
          revokedAt: at(10),
        });

        expect(await store.listTokens()).toEqual([kept]);
        expect(await store.listTokens({ includeRevoked: false })).toEqual([kept]);
        const all = await store.listTokens({ includeRevoked: true });
        expect(all.find((token) => token.id === revoked.id)).toEqual({
          ...revoked,
          revokedAt: at(10),
        });
        expect(all).toHaveLength(2);
      });

      it('when an unknown token is revoked, then the answer is null and nothing is stored', async () => {
        const store = open();

        expect(await store.revokeToken('tok_0000000000000000', at(1))).toBeNull();
        expect(await store.listTokens({ includeRevoked: true })).toEqual([]);
      });

      it('when last uses are recorded, then each moves forward only, the latest of a call wins, and unknown ids are ignored', async () => {
        const store = open();
        const [a, b] = [buildToken(), buildToken()];
        await store.insertToken(a);
        await store.insertToken(b);

        await store.recordLastUse([
          { id: a.id, at: at(30) },
          { id: a.id, at: at(40) },
          { id: a.id, at: at(35) },
          { id: 'tok_ffffffffffffffff', at: at(50) },
        ]);
        await store.recordLastUse([]);
        expect(await store.listTokens()).toEqual([
          { ...a, lastUsedAt: at(40) },
          { ...b, lastUsedAt: null },
        ]);

        await open().recordLastUse([
          { id: a.id, at: at(20) }, // older: stays at 40
          { id: b.id, at: at(5) },
        ]);
        expect(await store.listTokens()).toEqual([
          { ...a, lastUsedAt: at(40) },
          { ...b, lastUsedAt: at(5) },
        ]);

        await store.recordLastUse([{ id: a.id, at: at(41) }]);
        expect((await store.listTokens())[0]!.lastUsedAt).toEqual(at(41));
        expect(await store.listTokens({ includeRevoked: true })).toHaveLength(2);
      });

      it('when a revocation and last uses are written at once on 2 connections, then the token ends revoked with the latest use', async () => {
        const [a, b] = [open(), open()];
        const token = buildToken();
        await a.insertToken(token);

        await Promise.all([
          ...Array.from({ length: 6 }, (_, i) =>
            (i % 2 ? a : b).recordLastUse([{ id: token.id, at: at(10 + i) }]),
          ),
          b.revokeToken(token.id, at(30)),
          a.recordLastUse([{ id: token.id, at: at(20) }]),
        ]);

        expect(await a.listTokens()).toEqual([]);
        expect(await b.listTokens({ includeRevoked: true })).toEqual([
          { ...token, revokedAt: at(30), lastUsedAt: at(20) },
        ]);
      });
    });

    describe('enrolment codes', () => {
      it('when codes are inserted, then they are listed oldest first with nothing taken, Dates intact', async () => {
        const store = open();
        const later = buildCode({ createdAt: at(5), expiresAt: new Date('2026-12-01T00:00:00Z') });
        const earlier = buildCode({ createdAt: at(1), uses: 1 });
        await store.insertEnrolmentCode(later);
        await store.insertEnrolmentCode(earlier);

        expect(await open().listEnrolmentCodes()).toEqual([
          { ...earlier, usesTaken: 0, revokedAt: null },
          { ...later, usesTaken: 0, revokedAt: null },
        ]);
      });

      it('when a code with a stored id or code hash is inserted, then it is refused with ConflictError', async () => {
        const store = open();
        const first = buildCode();
        await store.insertEnrolmentCode(first);

        const sameId = await rejection(store.insertEnrolmentCode(buildCode({ id: first.id })));
        const sameHash = await rejection(
          store.insertEnrolmentCode(buildCode({ codeHash: first.codeHash })),
        );

        expect(sameId).toBeInstanceOf(ConflictError);
        expect(sameHash).toBeInstanceOf(ConflictError);
        expect((sameHash as Error).message).toMatch(/same codeHash/);
        expect(await store.listEnrolmentCodes({ includeRevoked: true })).toEqual([
          { ...first, usesTaken: 0, revokedAt: null },
        ]);
      });

      it('when a code is revoked, then it is listed only when asked, keeps its first revocation time, and an unknown one is null', async () => {
        const store = open();
        const code = buildCode();
        await store.insertEnrolmentCode(code);

        const revoked = { ...code, usesTaken: 0, revokedAt: at(7) };
        expect(await store.revokeEnrolmentCode(code.id, at(7))).toEqual(revoked);
        expect(await store.revokeEnrolmentCode(code.id, at(9))).toEqual(revoked);
        expect(await store.revokeEnrolmentCode('enr_unknown', at(9))).toBeNull();

        expect(await store.listEnrolmentCodes()).toEqual([]);
        expect(await store.listEnrolmentCodes({ includeRevoked: true })).toEqual([revoked]);
      });
    });

    describe('enrol', () => {
      it('when a live code is used, then one use is taken and the token made from the code is stored', async () => {
        const store = open();
        const code = buildCode({ uses: 2, expiresAt: at(50) });
        await store.insertEnrolmentCode(code);
        const given: EnrolmentCode[] = [];

        const result = await store.enrol(code.codeHash, at(49), (stored) => {
          given.push(stored);
          return tokenFor('office-7')(stored);
        });

        expect(given).toEqual([{ ...code, usesTaken: 0, revokedAt: null }]);
        if (!result.ok) throw new Error(`refused: ${result.reason}`);
        expect(result.token).toMatchObject({
          scopes: code.scopes,
          devices: ['office-7'],
          revokedAt: null,
        });
        expect(result.token.rateLimits).toBeNull();
        expect(result.code).toEqual(given[0]);
        expect(await open().listTokens()).toEqual([result.token]);
        expect(await store.listEnrolmentCodes()).toEqual([
          { ...code, usesTaken: 1, revokedAt: null },
        ]);
      });

      it('when makeToken gives the token rate limits, then the enrolled token is stored with them', async () => {
        const store = open();
        const code = buildCode({ uses: 1 });
        await store.insertEnrolmentCode(code);
        const rateLimits = { ingest: { limit: 10, windowMs: 1_000 } };

        const result = await store.enrol(code.codeHash, at(1), (stored) => ({
          ...tokenFor('office-8')(stored),
          rateLimits,
        }));

        if (!result.ok) throw new Error(`refused: ${result.reason}`);
        expect(result.token.rateLimits).toEqual(rateLimits);
        expect(await open().listTokens()).toEqual([result.token]);
      });

      it('when the code is unknown, expired, revoked or used up, then it is refused with that reason and nothing is stored', async () => {
        const store = open();
        const expiring = buildCode({ expiresAt: at(20) });
        const revoked = buildCode();
        const single = buildCode({ uses: 1 });
        for (const code of [expiring, revoked, single]) await store.insertEnrolmentCode(code);
        await store.revokeEnrolmentCode(revoked.id, at(1));
        expect((await store.enrol(single.codeHash, at(2), tokenFor('office-1'))).ok).toBe(true);
        let made = 0;
        const counting = (code: EnrolmentCode) => {
          made += 1;
          return tokenFor('office-2')(code);
        };

        const refusals = [
          await store.enrol(sha256(newSecret('sfe_')), at(2), counting),
          await store.enrol(expiring.codeHash, at(20), counting), // expires at 20: gone at 20
          await store.enrol(expiring.codeHash, at(21), counting),
          await store.enrol(revoked.codeHash, at(2), counting),
          await store.enrol(single.codeHash, at(3), counting),
        ];

        expect(refusals).toEqual<EnrolResult[]>([
          { ok: false, reason: 'unknown' },
          { ok: false, reason: 'expired' },
          { ok: false, reason: 'expired' },
          { ok: false, reason: 'revoked' },
          { ok: false, reason: 'used_up' },
        ]);
        expect(made).toBe(0);
        expect(await store.listTokens({ includeRevoked: true })).toHaveLength(1);
        const taken = (await store.listEnrolmentCodes({ includeRevoked: true })).map(
          (code) => code.usesTaken,
        );
        expect(taken.sort()).toEqual([0, 0, 1]);
      });

      it('when the token made is refused (a stored secret hash), then the enrol rejects ConflictError and the use is given back', async () => {
        const store = open();
        const existing = buildToken();
        await store.insertToken(existing);
        const code = buildCode({ uses: 1 });
        await store.insertEnrolmentCode(code);

        const error = await rejection(
          store.enrol(code.codeHash, at(1), () => buildToken({ secretHash: existing.secretHash })),
        );

        expect(error).toBeInstanceOf(ConflictError);
        expect((await store.listEnrolmentCodes())[0]!.usesTaken).toBe(0);
        const retried = await store.enrol(code.codeHash, at(2), tokenFor('office-3'));
        expect(retried.ok).toBe(true);
        expect(await store.listTokens()).toHaveLength(2);
      });

      it('when 8 enrols race on a 3-use code on 2 connections, round after round, then each round makes exactly 3 tokens and refuses 5 used_up', async () => {
        const [a, b] = [open(), open()];
        for (let round = 0; round < 4; round++) {
          const code = buildCode({ uses: 3 });
          await a.insertEnrolmentCode(code);

          const results = await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              (i % 2 ? a : b).enrol(code.codeHash, at(round), tokenFor(`office-${round}-${i}`)),
            ),
          );

          const enrolled = results.filter((result) => result.ok);
          expect(enrolled).toHaveLength(3);
          expect(results.filter((result) => !result.ok)).toEqual(
            Array.from({ length: 5 }, () => ({ ok: false, reason: 'used_up' })),
          );
          const codeState = (await b.listEnrolmentCodes()).find((listed) => listed.id === code.id);
          expect(codeState?.usesTaken).toBe(3);
        }
        const tokens = await b.listTokens();
        expect(tokens).toHaveLength(12);
        expect(new Set(tokens.map((token) => token.devices![0])).size).toBe(12);
      });

      it('when 5 enrols race on a code with 8 uses, then all 5 get a token and 3 uses are left', async () => {
        const [a, b] = [open(), open()];
        const code = buildCode({ uses: 8 });
        await a.insertEnrolmentCode(code);

        const results = await Promise.all(
          Array.from({ length: 5 }, (_, i) =>
            (i % 2 ? a : b).enrol(code.codeHash, at(1), tokenFor(`office-${i}`)),
          ),
        );

        expect(results.every((result) => result.ok)).toBe(true);
        expect((await a.listEnrolmentCodes())[0]!.usesTaken).toBe(5);
        expect(await b.listTokens()).toHaveLength(5);
      });
    });

    it('when tokens and codes are stored, then the store holds their hashes and never a secret', async () => {
      const store = open();
      const secret = newSecret();
      const codeSecret = newSecret('sfe_');
      const token = buildToken({ secretHash: sha256(secret) });
      const code = buildCode({ codeHash: sha256(codeSecret) });
      await store.insertToken(token);
      await store.insertEnrolmentCode(code);
      const deviceSecret = newSecret();
      const enrolled = await store.enrol(sha256(codeSecret), at(1), (stored) => ({
        ...tokenFor('office-9')(stored),
        secretHash: sha256(deviceSecret),
      }));
      expect(enrolled.ok).toBe(true);

      const stored = await fixture().storedText();

      expect(stored).toContain(sha256(secret));
      expect(stored).toContain(sha256(codeSecret));
      expect(stored).toContain(sha256(deviceSecret));
      for (const plain of [secret, codeSecret, deviceSecret]) expect(stored).not.toContain(plain);
      const listed = await store.listTokens();
      expect(listed.map((listedToken) => listedToken.secretHash).sort()).toEqual(
        [sha256(secret), sha256(deviceSecret)].sort(),
      );
    });
  });
}

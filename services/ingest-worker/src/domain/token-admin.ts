import { randomUUID } from 'node:crypto';
import {
  NotFoundError,
  type AuditAction,
  type EnrolmentCodeView,
  type HeldToken,
  type TokenRateLimitsView,
  type TokensRefusalCode,
  type TokensRequest,
  type TokenView,
} from '@screenfleet/contracts';
import type {
  AuditRow,
  AuditStore,
  AuditValue,
  EnrolmentCode,
  EnrolRefusal,
  StoredToken,
  TokenRateLimits,
  TokenStore,
} from '@screenfleet/storage';
import { matchesDevicePattern } from './device-pattern';

/** A request of one op, without its `op`. */
type Op<Name extends TokensRequest['op']> = Omit<Extract<TokensRequest, { op: Name }>, 'op'>;

/** What the domain tells its caller about writes besides its answers (logs, metrics). */
export interface TokenAdminObserver {
  auditWritten(rows: number): void;
  /** The change is done and answered; only its audit row is missing (the log keeps the row). */
  auditNotWritten(error: unknown, row: AuditRow): void;
}

export interface TokenAdminDeps {
  tokens: Omit<TokenStore, 'ensureSchema' | 'close'>;
  audit: Pick<AuditStore, 'insertRows'>;
  now: () => Date;
  /**
   * Tells every gateway to load a new snapshot (tokens.changed); awaited before the change is
   * answered, so a revocation the admin sees done has been announced. It must not reject: a
   * failed announcement is its wiring's to log (gateways reload every 30 s anyway).
   */
  changed: (reason: string) => Promise<void> | void;
  observer: TokenAdminObserver;
}

/** Why an enrolment made no token, as the reply says it. */
export type EnrolmentRefusal = Extract<
  TokensRefusalCode,
  | 'enrolment_code_invalid'
  | 'enrolment_code_revoked'
  | 'enrolment_code_expired'
  | 'enrolment_code_used_up'
  | 'device_not_allowed'
>;

export type EnrolOutcome =
  { ok: true; token: TokenView } | { ok: false; refusal: EnrolmentRefusal };

const refusalOf: Record<EnrolRefusal, EnrolmentRefusal> = {
  unknown: 'enrolment_code_invalid',
  revoked: 'enrolment_code_revoked',
  expired: 'enrolment_code_expired',
  used_up: 'enrolment_code_used_up',
};

/** Thrown inside the store's makeToken: the store then stores nothing and takes no use. */
class DeviceNotAllowed extends Error {
  constructor(readonly code: EnrolmentCode) {
    super('device not allowed');
  }
}

/**
 * Tokens and enrolment codes as the ingest worker administers them (ADR 0019): the gateways'
 * snapshot, and every change followed by its audit row and a tokens.changed announcement.
 */
export function createTokenAdmin({ tokens, audit, now, changed, observer }: TokenAdminDeps) {
  /**
   * After a change: its audit row, then the announcement. A failed audit write does not undo
   * or refuse the change (it is stored, and gateways must learn of it): it is reported to the
   * observer, which logs the row, and the change is answered as done.
   */
  async function done(row: Omit<AuditRow, 'id' | 'at'>, reason: string | null, at: Date) {
    await record({ id: randomUUID(), at, ...row });
    if (reason !== null) await announce(reason);
  }

  async function record(row: AuditRow) {
    try {
      await audit.insertRows([row]);
      observer.auditWritten(1);
    } catch (error) {
      observer.auditNotWritten(error, row);
    }
  }

  async function announce(reason: string) {
    try {
      await changed(reason);
    } catch {
      // changed() must not reject (see TokenAdminDeps); a change is never undone for it.
    }
  }

  const ok = (actor: string, action: AuditAction, details: Record<string, AuditValue>) => ({
    actor,
    action,
    device: null,
    outcome: 'ok' as const,
    outcomeCode: null,
    durationMs: null,
    details,
  });

  return {
    /** Every live token (not revoked, not expired now), as each gateway holds it. */
    async snapshot(): Promise<HeldToken[]> {
      const at = now().getTime();
      return (await tokens.listTokens())
        .filter(
          (token) => !token.revokedAt && !(token.expiresAt && token.expiresAt.getTime() <= at),
        )
        .map((token) => ({
          id: token.id,
          scopes: token.scopes as HeldToken['scopes'],
          devices: token.devices,
          expires_at_ms: token.expiresAt?.getTime() ?? null,
          rate_limits: rateLimitsView(token.rateLimits),
          secret_hash: token.secretHash,
        }));
    },

    async list({ include_revoked }: Op<'list'>): Promise<TokenView[]> {
      return (await tokens.listTokens({ includeRevoked: include_revoked })).map(tokenView);
    },

    /** ConflictError when the id or the secret's hash is stored already. */
    async create(request: Op<'create'>): Promise<TokenView> {
      const at = now();
      const token: StoredToken = {
        id: request.id,
        name: request.name,
        scopes: [...request.scopes],
        devices: request.devices ? [...request.devices] : null,
        createdAt: at,
        expiresAt: request.expires_at_ms === null ? null : new Date(request.expires_at_ms),
        lastUsedAt: null,
        revokedAt: null,
        secretHash: request.secret_hash,
        rateLimits: storedRateLimits(request.rate_limits),
      };
      await tokens.insertToken(token);
      await done(ok(request.actor, 'token.create', tokenDetails(token)), 'token.create', at);
      return tokenView(token);
    },

    /** NotFoundError when no token has the id; a revoked one stays revoked since its first. */
    async revoke({ actor, id }: Op<'revoke'>): Promise<TokenView> {
      const at = now();
      const token = await tokens.revokeToken(id, at);
      if (!token) throw new NotFoundError(`no token has the id ${id}`);
      await done(ok(actor, 'token.revoke', tokenDetails(token)), 'token.revoke', at);
      return tokenView(token);
    },

    async listCodes({ include_revoked }: Op<'list_codes'>): Promise<EnrolmentCodeView[]> {
      return (await tokens.listEnrolmentCodes({ includeRevoked: include_revoked })).map(codeView);
    },

    /** ConflictError when the id or the code's hash is stored already. */
    async createCode(request: Op<'create_code'>): Promise<EnrolmentCodeView> {
      const at = now();
      const code: EnrolmentCode = {
        id: request.id,
        name: request.name,
        scopes: [...request.scopes],
        devicePattern: request.device_pattern,
        uses: request.uses,
        usesTaken: 0,
        createdAt: at,
        expiresAt: request.expires_at_ms === null ? null : new Date(request.expires_at_ms),
        revokedAt: null,
        codeHash: request.code_hash,
      };
      const { usesTaken: _taken, revokedAt: _revoked, ...insert } = code;
      await tokens.insertEnrolmentCode(insert);
      const details = codeDetails(code);
      await done(ok(request.actor, 'enrolment_code.create', details), 'enrolment_code.create', at);
      return codeView(code);
    },

    async revokeCode({ actor, id }: Op<'revoke_code'>): Promise<EnrolmentCodeView> {
      const at = now();
      const code = await tokens.revokeEnrolmentCode(id, at);
      if (!code) throw new NotFoundError(`no enrolment code has the id ${id}`);
      // No tokens.changed: a code is no token, and no gateway holds codes.
      await done(ok(actor, 'enrolment_code.revoke', codeDetails(code)), null, at);
      return codeView(code);
    },

    /**
     * Trades a code for a token bound to the device: one use taken and the token stored in one
     * store step, after the device name matched the code's pattern (a name that does not match
     * takes no use). Every outcome leaves an audit row.
     */
    async enrol(request: Op<'enrol'>): Promise<EnrolOutcome> {
      const at = now();
      const device = request.device_name;
      let result;
      try {
        result = await tokens.enrol(request.code_hash, at, (code) => {
          if (!matchesDevicePattern(code.devicePattern, device)) throw new DeviceNotAllowed(code);
          return {
            id: request.token_id,
            // At most the 200 characters a name may have (a device name alone may have 200).
            name: Array.from(`${device} (${code.name})`).slice(0, 200).join(''),
            scopes: [...code.scopes],
            devices: [device],
            createdAt: at,
            expiresAt: null,
            lastUsedAt: null,
            revokedAt: null,
            secretHash: request.secret_hash,
            rateLimits: null,
          } satisfies StoredToken;
        });
      } catch (error) {
        if (!(error instanceof DeviceNotAllowed)) throw error;
        await refused(`enrolment:${error.code.id}`, 'device_not_allowed', device, at);
        return { ok: false, refusal: 'device_not_allowed' };
      }
      if (!result.ok) {
        const refusal = refusalOf[result.reason];
        const id = result.reason === 'unknown' ? null : await codeIdOf(request.code_hash);
        await refused(`enrolment:${id ?? 'unknown'}`, refusal, device, at);
        return { ok: false, refusal };
      }
      const { token, code } = result;
      await done(
        {
          ...ok(`enrolment:${code.id}`, 'token.enrol', {
            ...tokenDetails(token),
            code_id: code.id,
          }),
          device,
        },
        'token.enrol',
        at,
      );
      return { ok: true, token: tokenView(token) };
    },

    /** The latest uses gateways saw; unknown ids are ignored. */
    async used({ uses }: Op<'used'>): Promise<void> {
      await tokens.recordLastUse(uses.map(({ id, at_ms }) => ({ id, at: new Date(at_ms) })));
    },
  };

  function refused(actor: string, refusal: EnrolmentRefusal, device: string, at: Date) {
    return record({
      id: randomUUID(),
      at,
      actor,
      action: 'token.enrol',
      device,
      outcome: 'refused',
      outcomeCode: refusal,
      durationMs: null,
      details: { device_name: device },
    });
  }

  /**
   * The id of the code a refused enrolment named, for its audit row: read only on a refusal
   * (rare, and codes are few), so an enrolment that succeeds stays one store step. Unknown
   * when the read fails: the refusal is answered all the same.
   */
  async function codeIdOf(codeHash: string): Promise<string | null> {
    try {
      const codes = await tokens.listEnrolmentCodes({ includeRevoked: true });
      return codes.find((code) => code.codeHash === codeHash)?.id ?? null;
    } catch {
      return null;
    }
  }
}

export type TokenAdmin = ReturnType<typeof createTokenAdmin>;

const iso = (date: Date | null) => date?.toISOString() ?? null;

function tokenView(token: StoredToken): TokenView {
  return {
    id: token.id,
    name: token.name,
    scopes: token.scopes as TokenView['scopes'],
    devices: token.devices,
    created_at: token.createdAt.toISOString(),
    expires_at: iso(token.expiresAt),
    last_used_at: iso(token.lastUsedAt),
    revoked_at: iso(token.revokedAt),
    rate_limits: rateLimitsView(token.rateLimits),
  };
}

function codeView(code: EnrolmentCode): EnrolmentCodeView {
  return {
    id: code.id,
    name: code.name,
    scopes: code.scopes as EnrolmentCodeView['scopes'],
    device_pattern: code.devicePattern,
    uses: code.uses,
    uses_left: Math.max(0, code.uses - code.usesTaken),
    created_at: code.createdAt.toISOString(),
    expires_at: iso(code.expiresAt),
    revoked_at: iso(code.revokedAt),
  };
}

/** An audit row's details of a token: what identifies it, never its hash. */
function tokenDetails(token: StoredToken): Record<string, AuditValue> {
  return {
    token_id: token.id,
    name: token.name,
    scopes: token.scopes,
    devices: token.devices,
    expires_at: iso(token.expiresAt),
  };
}

/** An audit row's details of a code: what identifies it, never its hash. */
function codeDetails(code: EnrolmentCode): Record<string, AuditValue> {
  return {
    code_id: code.id,
    name: code.name,
    scopes: code.scopes,
    device_pattern: code.devicePattern,
    uses: code.uses,
    expires_at: iso(code.expiresAt),
  };
}

/** The wire's whole seconds as the store's milliseconds. */
function storedRateLimits(limits: TokenRateLimitsView): TokenRateLimits | null {
  if (!limits) return null;
  return Object.fromEntries(
    Object.entries(limits).map(([rateClass, rule]) => [
      rateClass,
      { limit: rule.limit, windowMs: rule.window_seconds * 1000 },
    ]),
  );
}

/** The store's milliseconds as the wire's whole seconds (the store only holds what we wrote). */
function rateLimitsView(limits: TokenRateLimits | null): TokenRateLimitsView {
  if (!limits) return null;
  return Object.fromEntries(
    Object.entries(limits).map(([rateClass, rule]) => [
      rateClass,
      { limit: rule.limit, window_seconds: Math.max(1, Math.round(rule.windowMs / 1000)) },
    ]),
  );
}

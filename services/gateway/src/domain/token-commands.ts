import {
  AppError,
  BadGatewayError,
  ConflictError,
  NotFoundError,
  StoreUnavailableError,
  ValidationError,
  createEnvelope,
  newEnrolmentCode,
  newTokenSecret,
  parseDateTime,
  queueNames,
  secretHash,
  validators,
  type EnrolRequest,
  type EnrolmentCodeCreateRequest,
  type TokenCreateRequest,
  type TokensReply,
  type TokensRequest,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { callWorkers } from './worker-call';

// Secrets and codes are made here, in the gateway, and leave it only in the answer to their
// creator: the ingest workers and the store get their SHA-256 (ADR 0019; contracts'
// token-secrets.ts makes them).

const tokenIdPattern = /^tok_[0-9a-f]{16}$/;
const codeIdPattern = /^enr_[0-9a-f]{16}$/;

/** A path's id as the worker takes it; anything else names nothing, so it is the unknown id's 404. */
export function tokenIdOf(id: string): string {
  if (!tokenIdPattern.test(id)) throw new NotFoundError(`no token "${id.slice(0, 100)}"`);
  return id;
}
export function enrolmentCodeIdOf(id: string): string {
  if (!codeIdPattern.test(id)) throw new NotFoundError(`no enrolment code "${id.slice(0, 100)}"`);
  return id;
}

/** An absent or null expiry never expires; a given one must be in the future (400 otherwise). */
function expiresAtMs(expiresAt: string | null | undefined, nowMs: number): number | null {
  if (expiresAt == null) return null;
  const ms = parseDateTime(expiresAt).getTime();
  if (ms <= nowMs) {
    throw new ValidationError('invalid body: expires_at must be in the future', [
      {
        path: 'expires_at',
        rule: 'future',
        detail: `expires_at ${expiresAt} is not in the future`,
      },
    ]);
  }
  return ms;
}

/** POST /tokens as the worker takes it, and the secret to answer once. */
export function toCreateToken(
  body: TokenCreateRequest,
  actor: string,
  nowMs: number,
): { request: TokensRequest; secret: string } {
  const { id, secret, secretHash: hash } = newTokenSecret();
  return {
    secret,
    request: {
      op: 'create',
      actor,
      id,
      name: body.name,
      scopes: body.scopes,
      devices: body.devices ?? null,
      expires_at_ms: expiresAtMs(body.expires_at, nowMs),
      rate_limits: body.rate_limits ?? null,
      secret_hash: hash,
    },
  };
}

/** POST /enrolment-codes as the worker takes it, and the code to answer once. */
export function toCreateEnrolmentCode(
  body: EnrolmentCodeCreateRequest,
  actor: string,
  nowMs: number,
): { request: TokensRequest; secret: string } {
  const { id, code: secret, codeHash } = newEnrolmentCode();
  return {
    secret,
    request: {
      op: 'create_code',
      actor,
      id,
      name: body.name,
      scopes: body.scopes,
      device_pattern: body.device_pattern,
      uses: body.uses,
      expires_at_ms: expiresAtMs(body.expires_at, nowMs),
      code_hash: codeHash,
    },
  };
}

/**
 * POST /enroll as the worker takes it: the code's hash (the worker looks it up by hash, so an
 * unknown code costs what a known one does) and the new token's id and secret hash.
 */
export function toEnrol(body: EnrolRequest): { request: TokensRequest; secret: string } {
  const { id, secret, secretHash: hash } = newTokenSecret();
  return {
    secret,
    request: {
      op: 'enrol',
      code_hash: secretHash(body.code),
      device_name: body.device_name,
      token_id: id,
      secret_hash: hash,
    },
  };
}

/** GET /tokens?include_revoked=: true, false or absent (false); anything else is a 400. */
export function parseIncludeRevoked(query: Readonly<Record<string, unknown>>): boolean {
  const value = Object.prototype.hasOwnProperty.call(query, 'include_revoked')
    ? query.include_revoked
    : undefined;
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  const repeated = Array.isArray(value);
  throw new ValidationError(
    repeated
      ? 'invalid query: include_revoked is given more than once'
      : 'invalid query: include_revoked must be true or false',
    [
      {
        path: 'query.include_revoked',
        rule: repeated ? 'repeated' : 'enum',
        detail: repeated ? 'send include_revoked once' : 'include_revoked must be true or false',
      },
    ],
  );
}

/** Why a code enrolled no device: the 403's code, and what its message says. */
export const enrolmentRefusals = {
  enrolment_code_invalid: 'the enrolment code is not valid',
  enrolment_code_revoked: 'the enrolment code was revoked',
  enrolment_code_expired: 'the enrolment code has expired',
  enrolment_code_used_up: 'the enrolment code has no uses left',
  device_not_allowed: 'the enrolment code does not enrol this device name (its device pattern)',
} as const;
export type EnrolmentRefusal = keyof typeof enrolmentRefusals;

/** A refusal of POST /enroll, thrown for the route to answer 403 with its code. */
export class EnrolmentRefusedError extends Error {
  constructor(readonly code: EnrolmentRefusal) {
    super(enrolmentRefusals[code]);
  }
}

type TokensAnswer = Exclude<TokensReply, { outcome: 'refused' }>;

/**
 * Asks the ingest workers (they own the token store, ADR 0019) over `tokens.rpc.v1` and returns
 * the answer of the expected kind. Throws what the client should see: callWorkers' errors (503
 * no worker or broker, 502 a reply breaking the contract), 404 not_found, 409 conflict, 503 the
 * store down, 502 a refusal of what the gateway built (validation_failed), an enrolment's
 * reason as EnrolmentRefusedError.
 */
export async function askTokens<O extends TokensAnswer['outcome']>(
  bus: Pick<Bus, 'call'>,
  request: TokensRequest,
  expected: O,
  options: { timeoutMs: number; requestId: string },
): Promise<Extract<TokensAnswer, { outcome: O }>> {
  const reply = await callWorkers<TokensReply>(bus, {
    queue: queueNames.tokensRpc,
    worker: 'an ingest worker',
    request: createEnvelope('tokens.request', request, { correlationId: options.requestId }),
    replyType: 'tokens.reply',
    reply: validators.tokensReply,
    timeoutMs: options.timeoutMs,
  });
  if (reply.outcome === expected) return reply as Extract<TokensAnswer, { outcome: O }>;
  if (reply.outcome !== 'refused') {
    throw new BadGatewayError(
      `the ingest worker answered the tokens ${request.op} request with '${reply.outcome}'`,
    );
  }
  switch (reply.code) {
    case 'not_found':
      throw new NotFoundError(reply.message);
    case 'conflict':
      throw new ConflictError(reply.message);
    case 'store_unavailable':
      throw new StoreUnavailableError(`the token store is unavailable: ${reply.message}`);
    case 'validation_failed':
      throw new BadGatewayError(`the ingest worker refused the tokens request: ${reply.message}`);
    case 'enrolment_code_invalid':
    case 'enrolment_code_revoked':
    case 'enrolment_code_expired':
    case 'enrolment_code_used_up':
    case 'device_not_allowed':
      throw new EnrolmentRefusedError(reply.code);
    case 'failed':
      throw new AppError('operation_failed', reply.message);
  }
}

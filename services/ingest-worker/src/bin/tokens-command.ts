/**
 * What `npm run tokens -- ...` asks, as the tokens.request the ingest workers answer (ADR 0019),
 * and how their reply is shown. The secret or code of a `create` is made here, shown once, and
 * only its hash is sent: the same rule as POST /tokens.
 */
import { parseArgs } from 'node:util';
import {
  newEnrolmentCode,
  newTokenSecret,
  parseDateTime,
  scopes,
  secretHash,
  validators,
  type EnrolmentCodeView,
  type Scope,
  type TokenView,
  type TokensReply,
  type TokensRequest,
} from '@screenfleet/contracts';

export const tokensUsage = `usage: npm run tokens -- <command>
  create --name NAME --scopes ingest[,search...] [--devices a,b] [--expires-in 30d | --expires-at TIME]
  list [--all]
  revoke tok_...
  code create --name NAME --scopes ingest[,...] --pattern 'lab-*' --uses N [--expires-in 7d | --expires-at TIME]
  code list [--all]
  code revoke enr_...
  import            store GATEWAY_TOKENS' tokens (their hashes) so the variable can be emptied
add --json for JSON output. Scopes: ${scopes.join(', ')}.`;

/** One command: the requests to send and what to print of each reply. */
export interface TokensCommand {
  requests: TokensRequest[];
  /** The secret made here, printed once after the reply (never sent). */
  secret?: string;
  /** --json: the reply (and the secret) as one JSON line. */
  json?: boolean;
}

/** An argument error: the message and the usage, exit code 2. */
export class UsageError extends Error {}

const CLI_ACTOR = 'cli';

export function parseTokensCommand(
  argv: readonly string[],
  env: { GATEWAY_TOKENS?: string | undefined },
  now = Date.now(),
): TokensCommand {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      devices: { type: 'string' },
      pattern: { type: 'string' },
      uses: { type: 'string' },
      'expires-in': { type: 'string' },
      'expires-at': { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
    },
  });
  const [first, second, third] = positionals;
  const command = first === 'code' ? `code ${second ?? ''}` : first;
  const id = first === 'code' ? third : second;
  return {
    ...commandOf(command ?? '', id, values, env, now),
    ...(values.json ? { json: true } : {}),
  };
}

function commandOf(
  command: string,
  id: string | undefined,
  values: {
    name?: string;
    scopes?: string;
    devices?: string;
    pattern?: string;
    uses?: string;
    'expires-in'?: string;
    'expires-at'?: string;
    all?: boolean;
  },
  env: { GATEWAY_TOKENS?: string | undefined },
  now: number,
): TokensCommand {
  switch (command) {
    case 'create': {
      const made = newTokenSecret();
      const devices = list(values.devices);
      return {
        secret: made.secret,
        requests: [
          {
            op: 'create',
            actor: CLI_ACTOR,
            id: made.id,
            name: required(values.name, '--name'),
            scopes: scopeList(values.scopes),
            devices: devices.length > 0 ? devices : null,
            expires_at_ms: expiry(values, now),
            rate_limits: null,
            secret_hash: made.secretHash,
          },
        ],
      };
    }
    case 'list':
      return { requests: [{ op: 'list', include_revoked: values.all ?? false }] };
    case 'revoke':
      return { requests: [{ op: 'revoke', actor: CLI_ACTOR, id: required(id, 'a token id') }] };
    case 'code create': {
      const made = newEnrolmentCode();
      const uses = Number(required(values.uses, '--uses'));
      if (!Number.isInteger(uses) || uses < 1 || uses > 100_000)
        throw new UsageError('--uses must be an integer from 1 to 100000');
      return {
        secret: made.code,
        requests: [
          {
            op: 'create_code',
            actor: CLI_ACTOR,
            id: made.id,
            name: required(values.name, '--name'),
            scopes: scopeList(values.scopes),
            device_pattern: required(values.pattern, '--pattern'),
            uses,
            expires_at_ms: expiry(values, now),
            code_hash: made.codeHash,
          },
        ],
      };
    }
    case 'code list':
      return { requests: [{ op: 'list_codes', include_revoked: values.all ?? false }] };
    case 'code revoke':
      return {
        requests: [{ op: 'revoke_code', actor: CLI_ACTOR, id: required(id, 'a code id') }],
      };
    case 'import':
      return { requests: importRequests(env.GATEWAY_TOKENS) };
    default:
      throw new UsageError(command ? `unknown command "${command.trim()}"` : 'no command given');
  }
}

/**
 * GATEWAY_TOKENS' entries as stored tokens: the same secrets (their hashes), scopes and
 * devices, each under a new `tok_` id named after its old id. The variable's own check is the
 * gateway's (it starts with it); here only what a store needs.
 */
function importRequests(text: string | undefined): TokensRequest[] {
  if (!text) throw new UsageError('import needs GATEWAY_TOKENS in the environment');
  let entries: unknown;
  try {
    entries = JSON.parse(text);
  } catch {
    throw new UsageError('GATEWAY_TOKENS is not JSON');
  }
  if (!Array.isArray(entries)) throw new UsageError('GATEWAY_TOKENS must be a JSON list');
  return entries.map(
    (entry: { id?: unknown; token?: unknown; scopes?: unknown; devices?: unknown }) => {
      if (typeof entry.id !== 'string' || typeof entry.token !== 'string')
        throw new UsageError('every GATEWAY_TOKENS entry needs an id and a token');
      return {
        op: 'create',
        actor: CLI_ACTOR,
        id: newTokenSecret().id,
        name: entry.id.slice(0, 200),
        scopes: entry.scopes as Scope[],
        devices: Array.isArray(entry.devices) ? (entry.devices as string[]) : null,
        expires_at_ms: null,
        rate_limits: null,
        secret_hash: secretHash(entry.token),
      };
    },
  );
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`${what} is required`);
  return value;
}

function list(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

function scopeList(text: string | undefined): Scope[] {
  const given = list(required(text, '--scopes'));
  const unknown = given.filter((scope) => !(scopes as readonly string[]).includes(scope));
  if (unknown.length > 0)
    throw new UsageError(`unknown scope ${unknown.join(', ')} (known: ${scopes.join(', ')})`);
  return [...new Set(given)] as Scope[];
}

const units: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** --expires-in 30d / 12h / 90m, or --expires-at an RFC 3339 time; null: never. Must be later. */
function expiry(values: { 'expires-in'?: string; 'expires-at'?: string }, now: number) {
  const { 'expires-in': within, 'expires-at': at } = values;
  if (within !== undefined && at !== undefined)
    throw new UsageError('give --expires-in or --expires-at, not both');
  let ms: number | null = null;
  if (within !== undefined) {
    const match = /^(\d{1,6})([mhd])$/.exec(within);
    if (!match) throw new UsageError('--expires-in must look like 90m, 12h or 30d');
    ms = now + Number(match[1]) * (units[match[2]!] ?? NaN);
  } else if (at !== undefined) {
    try {
      ms = parseDateTime(at).getTime();
    } catch {
      throw new UsageError('--expires-at must be a time with an offset, like 2027-01-01T00:00:00Z');
    }
  }
  if (ms !== null && ms <= now) throw new UsageError('the expiry must be in the future');
  return ms;
}

/** The reply as lines for a person; throws the refusal as an Error (exit 1). */
export function describeReply(reply: TokensReply, secret?: string): string {
  switch (reply.outcome) {
    case 'refused':
      throw new Error(`refused (${reply.code}): ${reply.message}`);
    case 'tokens':
      return reply.tokens.length === 0
        ? 'no tokens stored'
        : reply.tokens.map(describeToken).join('\n');
    case 'codes':
      return reply.codes.length === 0
        ? 'no enrolment codes stored'
        : reply.codes.map(describeCode).join('\n');
    case 'token':
      return secret
        ? `${describeToken(reply.token)}\nsecret (shown once, use as "Authorization: Bearer <secret>"):\n\n    ${secret}\n`
        : describeToken(reply.token);
    case 'code':
      return secret
        ? `${describeCode(reply.code)}\nenrolment code (shown once; desktops send it to POST /enroll):\n\n    ${secret}\n`
        : describeCode(reply.code);
    case 'snapshot':
    case 'recorded':
      return reply.outcome;
  }
}

function describeToken(token: TokenView): string {
  const state = token.revoked_at ? `revoked ${token.revoked_at}` : 'live';
  const devices = token.devices ? token.devices.join(',') : 'any device';
  return `${token.id}  ${token.name}  [${token.scopes.join(',')}]  ${devices}  expires ${token.expires_at ?? 'never'}  last used ${token.last_used_at ?? 'never'}  ${state}`;
}

function describeCode(code: EnrolmentCodeView): string {
  const state = code.revoked_at ? `revoked ${code.revoked_at}` : 'live';
  return `${code.id}  ${code.name}  [${code.scopes.join(',')}]  pattern ${code.device_pattern}  ${code.uses_left}/${code.uses} uses left  expires ${code.expires_at ?? 'never'}  ${state}`;
}

/** Checks a built request against the contract before it goes anywhere (a bug here is ours). */
export function checkRequest(request: TokensRequest): void {
  const errors = validators.tokensRequest.check(structuredClone(request));
  if (errors.length > 0)
    throw new UsageError(errors.map((error) => `${error.path} ${error.detail}`).join('; '));
}

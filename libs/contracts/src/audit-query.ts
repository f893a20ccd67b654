import { ValidationError } from './errors';
import {
  auditActions,
  auditDefaultLimit,
  auditMaxLimit,
  type AuditAction,
} from './http/audit.route';
import { utf8Length } from './json-shape';
import { limits } from './limits';
import { queryParameters } from './query-parameters';
import type { AuditRequest } from './messages/audit.messages';
import { canonicalDateTime, isDateTimeWithOffset, parseDateTime } from './timestamp';

/** The parameters GET /audit reads; any other is ignored. */
export const auditParameterNames = [
  'device',
  'token',
  'action',
  'from',
  'to',
  'limit',
  'cursor',
] as const;
type Name = (typeof auditParameterNames)[number];

/** deviceNameSchema's rule: no control characters. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * Parses GET /audit's query as express decoded it into the audit.request the ingest workers
 * answer: `token` becomes `actor`, times become UTC (compared as instants, whatever offset was
 * sent). Unknown parameters are ignored, an empty value is an absent one, a repeated one is a
 * 400. Throws ValidationError naming each bad parameter (`query.from`) and its rule. A cursor is
 * only bounded here: what it means is the worker's (a foreign one comes back as a refusal).
 */
export function parseAuditQuery(query: Readonly<Record<string, unknown>>): AuditRequest {
  const { errors, fail, text } = queryParameters<Name>(query);
  const time = (param: 'from' | 'to'): string | undefined => {
    const value = text(param);
    if (value === undefined) return undefined;
    if (!isDateTimeWithOffset(value))
      return fail(
        param,
        'format',
        `${param} must be an RFC 3339 date-time with an offset (2026-11-29T10:00:00Z)`,
      );
    return canonicalDateTime(value);
  };

  const device = text('device');
  if (device !== undefined && utf8Length(device) > limits.maxDeviceNameBytes)
    fail('device', 'maxBytes', `device must be at most ${limits.maxDeviceNameBytes} bytes`);
  else if (device !== undefined && hasControlCharacter(device))
    fail('device', 'pattern', 'device must not contain control characters');
  const actor = text('token');
  if (actor !== undefined && actor.length > 256)
    fail('token', 'maxLength', 'token must be at most 256 characters (a token id)');
  const action = text('action');
  if (action !== undefined && !(auditActions as readonly string[]).includes(action))
    fail('action', 'enum', `action must be one of: ${auditActions.join(', ')}`);
  const from = time('from');
  const to = time('to');
  if (from !== undefined && to !== undefined && parseDateTime(from) >= parseDateTime(to))
    fail('to', 'range', 'to must be after from (from is inclusive, to exclusive)');
  const limitText = text('limit');
  let limit = auditDefaultLimit;
  if (limitText !== undefined) {
    if (!/^\d{1,15}$/.test(limitText)) fail('limit', 'type', 'limit must be a whole number');
    else if (Number(limitText) < 1) fail('limit', 'minimum', 'limit must be at least 1');
    else if (Number(limitText) > auditMaxLimit)
      fail('limit', 'maximum', `limit must be at most ${auditMaxLimit}`);
    else limit = Number(limitText);
  }
  const cursor = text('cursor');
  if (cursor !== undefined && cursor.length > 512)
    fail('cursor', 'maxLength', 'cursor must be at most 512 characters (a next_cursor)');

  if (errors.length > 0) {
    throw new ValidationError(`invalid audit query: ${errors[0]?.detail}`, errors);
  }
  return {
    limit,
    ...(device !== undefined ? { device } : {}),
    ...(actor !== undefined ? { actor } : {}),
    ...(action !== undefined ? { action: action as AuditAction } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  };
}

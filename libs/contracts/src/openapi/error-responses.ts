import type { ErrorStatus, Json, JsonObject } from '../contract';
import { limits } from '../limits';

const errorExample = (message: string, code?: string, errors: Json[] = []): Json => ({
  success: false,
  message,
  errors,
  ...(code ? { code } : {}),
});

const retryAfter = {
  'Retry-After': {
    description: 'Seconds to wait before asking again.',
    schema: { type: 'integer' },
  },
};

/** What each error status means on this API; the body is always ErrorBody. */
export const errorResponses: Record<
  ErrorStatus,
  { name: string; description: string; example: Json; headers?: JsonObject }
> = {
  400: {
    name: 'BadRequest',
    description:
      'The body is not JSON or not UTF-8, or fields break rules: each is named in `errors` ' +
      '(at most 50). Arrays over 1000 elements, objects over 1000 keys and nesting over 1000 ' +
      'levels are refused before the body is parsed.',
    example: errorExample('invalid add request: device_name is required', 'validation_failed', [
      { path: 'device_name', rule: 'required', detail: 'device_name is required' },
    ]),
  },
  401: {
    name: 'Unauthorized',
    description: 'No bearer token, or one that is not valid.',
    example: errorExample('a bearer token is required (Authorization: Bearer <token>)'),
    headers: { 'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } } },
  },
  403: {
    name: 'Forbidden',
    description:
      "The token lacks the route's scope or is not bound to the device; or a tokenless " +
      'request names a foreign Host or Origin (DNS rebinding; GET /health: only the Host).',
    example: errorExample('token desk-1 lacks the operator scope'),
  },
  404: {
    name: 'NotFound',
    description: 'No operator agent is connected for the device (or the route does not exist).',
    example: errorExample('no agent is connected for device "desk-1"', 'device_unavailable'),
  },
  405: {
    name: 'MethodNotAllowed',
    description: 'The path exists, the method does not; `Allow` lists the methods.',
    example: errorExample('PUT is not allowed on /add'),
    headers: { Allow: { schema: { type: 'string' } } },
  },
  409: {
    name: 'Conflict',
    description:
      'Press, click, type: the listing is not the current one, the element changed or is gone, ' +
      'or cannot take the action (nothing pressed, clicked or typed). ' +
      'Archive: already initialised (init), still enabled or busy with a pass or a rekey (restore).',
    example: errorExample('the archive is already initialised', 'conflict'),
  },
  413: {
    name: 'PayloadTooLarge',
    description: `The body is over ${limits.maxBodyBytes} bytes, or one item is too large for a broker message.`,
    example: errorExample(`the body is larger than ${limits.maxBodyBytes} bytes`),
  },
  415: {
    name: 'UnsupportedMediaType',
    description:
      'Content-Type is not application/json, its charset is not utf-8 (refused before the body is read), or Content-Encoding is unknown.',
    example: errorExample('Content-Type must be application/json', undefined, [
      { path: '', rule: 'content-type', detail: 'got text/plain' },
    ]),
  },
  429: {
    name: 'TooManyRequests',
    description:
      "The caller is past this gateway's rate limit for the route's class (ingest, search, " +
      'operator, archive, admin; per token, or per address for requests without a valid token: ' +
      'unauthenticated), counted before the body is read. Limits are per gateway. Every answer ' +
      'of a limited route carries RateLimit-Policy and RateLimit ' +
      '(draft-ietf-httpapi-ratelimit-headers-08).',
    example: errorExample(
      'too many ingest requests: at most 6000 per 60 s per token on this gateway; retry in 1 s',
      'rate_limited',
    ),
    headers: {
      ...retryAfter,
      'RateLimit-Policy': {
        description: 'The class\'s quota: `"<class>";q=<requests>;w=<window seconds>`.',
        schema: { type: 'string', examples: ['"ingest";q=6000;w=60'] },
      },
      RateLimit: {
        description:
          'What is left: `"<class>";r=<remaining>;t=<seconds>`; on a 429, `t` is Retry-After.',
        schema: { type: 'string', examples: ['"ingest";r=0;t=1'] },
      },
    },
  },
  500: {
    name: 'InternalError',
    description:
      '`outcome_unknown`: a command was sent but its answer was lost, so it may have run; check ' +
      'before sending it again (no Retry-After). `operation_failed`: the agent or worker failed.',
    example: errorExample('the answer to the key press was lost', 'outcome_unknown'),
  },
  502: {
    name: 'BadGateway',
    description:
      'The archive worker (or, for /search, the ingest worker) answered something that breaks ' +
      'the contract, or refused a request the gateway built.',
    example: errorExample('the archive worker sent an invalid reply: status is required'),
  },
  503: {
    name: 'ServiceUnavailable',
    description:
      'The broker, the store, the desktop, the archive worker or (for /search) the ingest ' +
      'workers are unavailable (or did not answer in time); come back after `Retry-After`.',
    example: errorExample('broker blocked: low on memory', 'broker_unavailable'),
    headers: retryAfter,
  },
  504: {
    name: 'GatewayTimeout',
    description: 'The operator agent did not answer in time; nothing is pressed after this answer.',
    example: errorExample('the agent did not answer within 10000 ms', 'timeout'),
  },
};

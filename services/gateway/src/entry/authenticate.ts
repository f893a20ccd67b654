import type { Request, RequestHandler } from 'express';
import type { Scope, TokenGrant, TokenRegistry } from '../auth/tokens';
import { isAllowedHost, isLoopback, isLoopbackHost, isLoopbackOrigin } from '../auth/loopback';
import { peerKey, routeClassOf, type RateLimits, type RouteClass } from '../auth/rate-limits';
import { rateLimitHeaders, type RateRule } from '../auth/rate-limiter';
import { HttpError, RETRY_AFTER_SECONDS } from './http-error';

/** The code of a 503 for a token that may be good but cannot be checked yet. */
const storeUnavailable = 'token_store_unavailable';

export interface AuthOptions {
  tokens: TokenRegistry;
  /** screenpipe's unmodified local clients send no token; only honoured from loopback peers. */
  allowUnauthenticatedLoopback: boolean;
  /** Counted once the caller is known, before the body is read (auth/rate-limits.ts); none when absent. */
  rateLimits?: RateLimits;
}

/**
 * What screenpipe's unmodified local clients need: pushing content, searching it (its SDK's
 * queryScreenpipe and pipes send no token), and reading and setting up the archive (its desktop
 * app posts /archive/init and /archive/configure without a token).
 * Never the operator scope: a key press into a desktop always needs a token, even locally.
 */
export const anonymousLoopback: TokenGrant = {
  id: 'unauthenticated-loopback',
  scopes: ['ingest', 'search', 'archive:read', 'archive:write'],
};

declare module 'express-serve-static-core' {
  interface Locals {
    grant: TokenGrant;
  }
}

/**
 * Who is asking, checked before anything of the body is read: the grant of a valid bearer token
 * that has `scope` (401 without a valid token, 403 without the scope), or with the loopback switch
 * on, the anonymous grant for a tokenless loopback request addressed to a loopback Host and
 * Origin (403 otherwise). Then the rate limit of the scope's class (429). Route handlers call
 * it first; `requireScope` is the same as middleware. The audited routes (operator commands,
 * deletes, restores) pass `identified`: told who asks before the scope is checked, so a valid
 * token refused for its scope is an attempt by a known actor and its audit row names it.
 */
export function authenticate(
  req: Request,
  scope: Scope,
  options: AuthOptions,
  identified?: (grant: TokenGrant) => void,
): TokenGrant {
  const grant = identify(req, options, scope);
  identified?.(grant);
  if (!grant.scopes.includes(scope)) {
    throw new HttpError(403, 'forbidden_scope', `token ${grant.id} lacks the ${scope} scope`);
  }
  return grant;
}

/**
 * authenticate() without the scope check (GET /auth/whoami: any valid token), counted in the
 * class of `scope` (none: admin). The count comes before the scope check, so a flood of 403s is
 * limited as well; a request that would be a 401 is counted per peer address instead
 * ('unauthenticated'), so a flood of bad tokens is too. The anonymous loopback grant is keyed
 * by its id, like a token: every tokenless local client shares it.
 */
export function identify(req: Request, options: AuthOptions, scope?: Scope): TokenGrant {
  let grant: TokenGrant;
  try {
    grant = identifyUncounted(req, options);
  } catch (error) {
    if (error instanceof HttpError && (error.status === 401 || error.code === storeUnavailable))
      countRequest(req, options, 'unauthenticated', peerKey(req.socket.remoteAddress));
    throw error;
  }
  const routeClass = routeClassOf(scope);
  countRequest(req, options, routeClass, grant.id, grant.rateLimits?.[routeClass]);
  return grant;
}

/**
 * identify() without counting: for GET /health only, which anyone may poll (a load balancer, a
 * client every few seconds) and whose cost is one shared summary read a second however often
 * it is asked (health.routes.ts), so a limit would only turn monitors red.
 */
export function identifyUncounted(req: Request, options: AuthOptions): TokenGrant {
  const header = req.get('authorization');
  let grant: TokenGrant | undefined;
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    grant = match?.[1] ? options.tokens.find(match[1]) : undefined;
    if (!grant && match?.[1] && !options.tokens.isComplete()) throw tokenStoreUnavailable();
    if (!grant) throw unauthorized('the bearer token is not valid');
  } else if (options.allowUnauthenticatedLoopback && isLoopback(req.socket.remoteAddress)) {
    assertNotRebound(req.get('host'), req.get('origin'));
    grant = anonymousLoopback;
  } else {
    throw unauthorized('a bearer token is required (Authorization: Bearer <token>)');
  }
  return grant;
}

/**
 * One request of `key` in `routeClass`: the RateLimit headers on the answer whatever it is,
 * and a 429 past the limit. Retry-After and the RateLimit `t` then name the same moment
 * (draft-ietf-httpapi-ratelimit-headers-08, section 5).
 */
export function countRequest(
  req: Request,
  options: AuthOptions,
  routeClass: RouteClass,
  key: string,
  tokenRule?: RateRule,
): void {
  const check = options.rateLimits?.check(routeClass, key, tokenRule);
  if (!check) return;
  const headers = rateLimitHeaders(routeClass, check.rule, check);
  if (check.allowed) {
    req.res?.set(headers);
    return;
  }
  const per = routeClass === 'unauthenticated' ? 'address' : 'token';
  throw new HttpError(
    429,
    'rate_limited',
    `too many ${routeClass} requests: at most ${check.rule.limit} per ${check.rule.windowMs / 1000} s per ${per} on this gateway; retry in ${check.resetSeconds} s`,
    [],
    { ...headers, 'Retry-After': String(check.resetSeconds) },
    'rate_limited',
  );
}

/** authenticate() as a route's first middleware; the grant goes to res.locals.grant. */
export function requireScope(scope: Scope, options: AuthOptions): RequestHandler {
  return (req, res, next) => {
    res.locals.grant = authenticate(req, scope, options);
    next();
  };
}

/** Producer tokens bound to devices may only act for those devices. */
export function assertDeviceAllowed(grant: TokenGrant, device: string): void {
  if (grant.devices && !grant.devices.includes(device)) {
    throw new HttpError(
      403,
      'forbidden_device',
      `token ${grant.id} is not allowed for device "${device}"`,
    );
  }
}

/**
 * A loopback peer is not enough without a token: a web page can reach 127.0.0.1 through DNS
 * rebinding, but its browser still sends the page's own Host and Origin. Only a loopback Host
 * and no Origin (not a browser) or a loopback one are served without a token.
 */
function assertNotRebound(host: string | undefined, origin: string | undefined): void {
  assertTokenlessHost(host);
  if (!isLoopbackOrigin(origin)) {
    throw new HttpError(
      403,
      'foreign_origin',
      'a request without a token may not come from a web page of another origin',
      [{ path: 'headers.origin', rule: 'loopback', detail: `Origin ${origin} is not loopback` }],
    );
  }
}

/**
 * The Host rule of every request served without a token (DNS rebinding: a page that reached a
 * loopback port by a name it controls still sends that name): a loopback Host, or one of
 * `allowedHosts` where a route lets the operator name more (GET /health only:
 * GATEWAY_HEALTH_ALLOWED_HOSTS; health.routes.ts says why no other; the message then names the
 * variable, set or not). 403 foreign_host otherwise.
 */
export function assertTokenlessHost(
  host: string | undefined,
  allowedHosts?: readonly string[],
): void {
  if (isLoopbackHost(host) || isAllowedHost(host, allowedHosts ?? [])) return;
  const besides = allowedHosts ? ' or one of GATEWAY_HEALTH_ALLOWED_HOSTS' : '';
  throw new HttpError(
    403,
    'foreign_host',
    `a request without a token must be addressed to a loopback Host (127.0.0.1, localhost or [::1])${besides}`,
    [
      {
        path: 'headers.host',
        rule: 'loopback',
        detail: `Host ${host ?? '(none)'} is not loopback${besides ? ' nor allowed' : ''}`,
      },
    ],
  );
}

/**
 * A token this gateway does not hold while it never loaded the stored tokens (the store or the
 * broker unreachable since it started): it may be a good one, so not a 401 that a client would
 * take as final (ADR 0019). Counted as a 401 would be, per address.
 */
function tokenStoreUnavailable(): HttpError {
  return new HttpError(
    503,
    storeUnavailable,
    'this gateway has not loaded the stored tokens yet (the ingest workers or the broker are unreachable); only configured tokens are checked for now: try again later',
    [],
    { 'Retry-After': RETRY_AFTER_SECONDS },
    storeUnavailable,
  );
}

function unauthorized(message: string): HttpError {
  return new HttpError(401, 'unauthorized', message, [], { 'WWW-Authenticate': 'Bearer' });
}

import type { Request, RequestHandler } from 'express';
import type { Scope, TokenGrant, TokenRegistry } from '../auth/tokens';
import { isAllowedHost, isLoopback, isLoopbackHost, isLoopbackOrigin } from '../auth/loopback';
import { HttpError } from './http-error';

export interface AuthOptions {
  tokens: TokenRegistry;
  /** screenpipe's unmodified local clients send no token; only honoured from loopback peers. */
  allowUnauthenticatedLoopback: boolean;
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
 * Origin (403 otherwise). Route handlers call it first; `requireScope` is the same as middleware.
 */
export function authenticate(req: Request, scope: Scope, options: AuthOptions): TokenGrant {
  const grant = identify(req, options);
  if (!grant.scopes.includes(scope)) {
    throw new HttpError(403, 'forbidden_scope', `token ${grant.id} lacks the ${scope} scope`);
  }
  return grant;
}

/** authenticate() without a scope: any valid token, or the loopback grant (GET /auth/whoami). */
export function identify(req: Request, options: AuthOptions): TokenGrant {
  const header = req.get('authorization');
  let grant: TokenGrant | undefined;
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    grant = match?.[1] ? options.tokens.find(match[1]) : undefined;
    if (!grant) throw unauthorized('the bearer token is not valid');
  } else if (options.allowUnauthenticatedLoopback && isLoopback(req.socket.remoteAddress)) {
    assertNotRebound(req.get('host'), req.get('origin'));
    grant = anonymousLoopback;
  } else {
    throw unauthorized('a bearer token is required (Authorization: Bearer <token>)');
  }
  return grant;
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

function unauthorized(message: string): HttpError {
  return new HttpError(401, 'unauthorized', message, [], { 'WWW-Authenticate': 'Bearer' });
}

import type { Request, RequestHandler } from 'express';
import type { Scope, TokenGrant, TokenRegistry } from '../auth/tokens';
import { isLoopback, isLoopbackHost, isLoopbackOrigin } from '../auth/loopback';
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
  if (!isLoopbackHost(host)) {
    throw new HttpError(
      403,
      'foreign_host',
      'a request without a token must be addressed to a loopback Host (127.0.0.1, localhost or [::1])',
      [
        {
          path: 'headers.host',
          rule: 'loopback',
          detail: `Host ${host ?? '(none)'} is not loopback`,
        },
      ],
    );
  }
  if (!isLoopbackOrigin(origin)) {
    throw new HttpError(
      403,
      'foreign_origin',
      'a request without a token may not come from a web page of another origin',
      [{ path: 'headers.origin', rule: 'loopback', detail: `Origin ${origin} is not loopback` }],
    );
  }
}

function unauthorized(message: string): HttpError {
  return new HttpError(401, 'unauthorized', message, [], { 'WWW-Authenticate': 'Bearer' });
}

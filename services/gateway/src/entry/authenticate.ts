import type { RequestHandler } from 'express';
import type { Scope, TokenGrant, TokenRegistry } from '../auth/tokens';
import { isLoopback } from '../auth/loopback';
import { HttpError } from './http-errors';

export interface AuthOptions {
  tokens: TokenRegistry;
  /** screenpipe's unmodified local clients send no token; only honoured from loopback peers. */
  allowUnauthenticatedLoopback: boolean;
}

/**
 * What screenpipe's unmodified local clients need: pushing content and reading the archive.
 * Never the operator scope: a key press into a desktop always needs a token, even locally.
 */
const anonymousLoopback: TokenGrant = {
  id: 'unauthenticated-loopback',
  scopes: ['ingest', 'archive:read'],
};

declare module 'express-serve-static-core' {
  interface Locals {
    grant: TokenGrant;
  }
}

export function requireScope(scope: Scope, options: AuthOptions): RequestHandler {
  return (req, res, next) => {
    const header = req.get('authorization');
    let grant: TokenGrant | undefined;
    if (header) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      grant = match?.[1] ? options.tokens.find(match[1]) : undefined;
      if (!grant) throw unauthorized('the bearer token is not valid');
    } else if (options.allowUnauthenticatedLoopback && isLoopback(req.socket.remoteAddress)) {
      grant = anonymousLoopback;
    } else {
      throw unauthorized('a bearer token is required (Authorization: Bearer <token>)');
    }
    if (!grant.scopes.includes(scope)) {
      throw new HttpError(403, 'forbidden_scope', `token ${grant.id} lacks the ${scope} scope`);
    }
    res.locals.grant = grant;
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

function unauthorized(message: string): HttpError {
  return new HttpError(401, 'unauthorized', message, [], { 'WWW-Authenticate': 'Bearer' });
}

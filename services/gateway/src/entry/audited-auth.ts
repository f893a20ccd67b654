import type { Request } from 'express';
import type { Scope, TokenGrant } from '../auth/tokens';
import { identify, type AuthOptions } from './authenticate';
import { HttpError } from './http-error';

/**
 * authenticate() in two steps for the audited routes (operator commands, deletes, restores):
 * who is asking (a 401 has no actor), told to `identified`, then the scope. A valid token
 * refused for its scope is an attempt by a known actor: its audit row names it (ADR 0019).
 * The same count and the same 403 as authenticate().
 */
export function authenticateAudited(
  req: Request,
  scope: Scope,
  options: AuthOptions,
  identified: (grant: TokenGrant) => void,
): TokenGrant {
  const grant = identify(req, options, scope);
  identified(grant);
  if (!grant.scopes.includes(scope)) {
    throw new HttpError(403, 'forbidden_scope', `token ${grant.id} lacks the ${scope} scope`);
  }
  return grant;
}

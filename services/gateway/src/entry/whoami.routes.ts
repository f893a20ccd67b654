import { Router } from 'express';
import { whoAmIRoute, type WhoAmI } from '@screenfleet/contracts';
import { anonymousLoopback, identify, type AuthOptions } from './authenticate';

export const whoAmIPath = whoAmIRoute.path;

/**
 * GET /auth/whoami: the caller's grant (token id, scopes, devices), so that a client such as the
 * console offers only what its token may do, and learns without a token whether the tokenless
 * loopback grant lets it in. Any valid token may ask; the secret is never echoed.
 */
export function whoAmIRoutes(auth: AuthOptions): Router {
  const router = Router();
  router.get(whoAmIPath, (req, res) => {
    const grant = identify(req, auth);
    const answer: WhoAmI = {
      token_id: grant.id,
      grant: grant === anonymousLoopback ? 'loopback' : 'token',
      scopes: [...grant.scopes],
      devices: grant.devices ? [...grant.devices] : null,
    };
    res.set('Cache-Control', 'no-store').json(answer);
  });
  return router;
}

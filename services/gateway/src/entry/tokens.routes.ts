import { Router, type Request, type Response } from 'express';
import { limits, tokenPaths, validators, type TokensRequest } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { peerKey } from '../auth/rate-limits';
import {
  askTokens,
  enrolmentCodeIdOf,
  EnrolmentRefusedError,
  parseIncludeRevoked,
  toCreateEnrolmentCode,
  toCreateToken,
  toEnrol,
  tokenIdOf,
} from '../domain/token-commands';
import { countedCall } from '../domain/worker-call';
import type { AdminMetrics } from '../metrics';
import { countRequest, requireScope, type AuthOptions } from './authenticate';
import { HttpError } from './http-error';
import { jsonBody } from './json-body';

export { tokenPaths };

/** The metrics' route labels of the paths with an id (bounded: not the id itself). */
export const tokenRouteLabels = { token: tokenPaths.token, code: tokenPaths.code } as const;

/** The token paths and their methods, for the app's 405 answers. */
export const tokenRouteMethods: Record<string, string[]> = {
  [tokenPaths.tokens]: ['GET', 'POST'],
  [tokenPaths.token]: ['DELETE'],
  [tokenPaths.codes]: ['GET', 'POST'],
  [tokenPaths.code]: ['DELETE'],
  [tokenPaths.enroll]: ['POST'],
};

/** `/tokens/abc` -> `/tokens/{id}`: the pattern a path with an id belongs to, else undefined. */
export function tokenRouteOf(path: string): string | undefined {
  if (path.startsWith(`${tokenPaths.tokens}/`)) return tokenPaths.token;
  if (path.startsWith(`${tokenPaths.codes}/`)) return tokenPaths.code;
  return undefined;
}

export interface TokensRoutesDeps {
  bus: Pick<Bus, 'call'>;
  auth: AuthOptions;
  metrics: AdminMetrics;
  timeoutMs: number;
}

/** Express writes a path parameter `:id`, OpenAPI `{id}`. */
const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * Tokens and enrolment codes as data (ADR 0019), kept by the ingest workers over tokens.rpc.
 * The gateway makes every secret and code (domain/token-commands.ts), sends only their hashes
 * and answers them once; the actor of a change is the admin token's id (the worker writes the
 * audit row with the change). POST /enroll needs no token: counted per peer address like a
 * request without a valid token, before its body is read.
 */
export function tokensRoutes(deps: TokensRoutesDeps): Router {
  const router = Router();
  const admin = requireScope('tokens:admin', deps.auth);
  const body = jsonBody(limits.maxBodyBytes);
  const ask = <O extends Parameters<typeof askTokens>[2]>(
    res: Response,
    request: TokensRequest,
    expected: O,
  ) =>
    countedCall(deps.metrics, { action: request.op }, () =>
      askTokens(deps.bus, request, expected, {
        timeoutMs: deps.timeoutMs,
        requestId: res.locals.requestId,
      }),
    );
  const created = (res: Response) => res.status(201).set('Cache-Control', 'no-store');

  router.post(tokenPaths.tokens, admin, ...body, async (req, res) => {
    const parsed = validators.tokenCreateRequest.parse(req.body);
    const { request, secret } = toCreateToken(parsed, res.locals.grant.id, Date.now());
    const { token } = await ask(res, request, 'token');
    created(res).json({ token, secret });
  });

  router.get(tokenPaths.tokens, admin, async (req, res) => {
    const includeRevoked = parseIncludeRevoked(req.query);
    const { tokens } = await ask(res, { op: 'list', include_revoked: includeRevoked }, 'tokens');
    res.set('Cache-Control', 'no-store').json({ tokens });
  });

  router.delete(expressPath(tokenPaths.token), admin, async (req, res) => {
    const id = tokenIdOf(String(req.params.id));
    const { token } = await ask(res, { op: 'revoke', actor: res.locals.grant.id, id }, 'token');
    res.set('Cache-Control', 'no-store').json({ token });
  });

  router.post(tokenPaths.codes, admin, ...body, async (req, res) => {
    const parsed = validators.enrolmentCodeCreateRequest.parse(req.body);
    const { request, secret } = toCreateEnrolmentCode(parsed, res.locals.grant.id, Date.now());
    const { code } = await ask(res, request, 'code');
    created(res).json({ code, secret });
  });

  router.get(tokenPaths.codes, admin, async (req, res) => {
    const includeRevoked = parseIncludeRevoked(req.query);
    const { codes } = await ask(
      res,
      { op: 'list_codes', include_revoked: includeRevoked },
      'codes',
    );
    res.set('Cache-Control', 'no-store').json({ codes });
  });

  router.delete(expressPath(tokenPaths.code), admin, async (req, res) => {
    const id = enrolmentCodeIdOf(String(req.params.id));
    const { code } = await ask(res, { op: 'revoke_code', actor: res.locals.grant.id, id }, 'code');
    res.set('Cache-Control', 'no-store').json({ code });
  });

  router.post(tokenPaths.enroll, countedByAddress(deps.auth), ...body, async (req, res) => {
    const { request, secret } = toEnrol(validators.enrolRequest.parse(req.body));
    try {
      const { token } = await ask(res, request, 'token');
      created(res).json({ token, secret });
    } catch (error) {
      if (!(error instanceof EnrolmentRefusedError)) throw error;
      throw new HttpError(403, error.code, error.message, [], {}, error.code);
    }
  });

  return router;
}

/** POST /enroll has no token to count by: the peer's address, in the 'unauthenticated' class. */
function countedByAddress(auth: AuthOptions) {
  return (req: Request, _res: Response, next: () => void) => {
    countRequest(req, auth, 'unauthenticated', peerKey(req.socket.remoteAddress));
    next();
  };
}

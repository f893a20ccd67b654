import type { Request } from 'express';
import { createRateLimits } from '../auth/rate-limits';
import type { TokenGrant, TokenRegistry } from '../auth/tokens';
import { identify, type AuthOptions } from './authenticate';
import { HttpError } from './http-error';

const configured: TokenGrant = { id: 'admin', scopes: ['tokens:admin'] };
const stored: TokenGrant = {
  id: 'tok_0000000000000001',
  scopes: ['ingest'],
  rateLimits: { ingest: { limit: 2, windowMs: 60_000 } },
};

/** A registry holding `grants` by secret, complete or not (no snapshot loaded yet). */
function registry(grants: Record<string, TokenGrant>, complete: boolean): TokenRegistry {
  return {
    find: (presented) => grants[presented],
    isComplete: () => complete,
    size: Object.keys(grants).length,
  };
}

/** Just what identify() reads of a request. */
function request(token: string): Request {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  return {
    get: (name: string) => headers[name.toLowerCase()],
    socket: { remoteAddress: '192.0.2.7' },
    res: { set: () => undefined },
  } as unknown as Request;
}

function failure(run: () => unknown): HttpError {
  try {
    run();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error('no error was thrown');
}

describe('identify, with the stored tokens', () => {
  it('when no snapshot was loaded yet, then a configured token passes and any other gets 503 token_store_unavailable, never 401', () => {
    const options: AuthOptions = {
      tokens: registry({ 'configured-secret': configured }, false),
      allowUnauthenticatedLoopback: false,
    };
    expect(identify(request('configured-secret'), options)).toBe(configured);

    const refused = failure(() => identify(request('sf_maybe-a-good-one'), options));
    expect(refused).toMatchObject({ status: 503, code: 'token_store_unavailable' });
    expect(refused.headers['Retry-After']).toBe('5');
  });

  it('when a snapshot was loaded, then an unknown token gets 401', () => {
    const options: AuthOptions = {
      tokens: registry({}, true),
      allowUnauthenticatedLoopback: false,
    };
    expect(failure(() => identify(request('sf_unknown'), options))).toMatchObject({
      status: 401,
      reason: 'unauthorized',
    });
  });

  it("when a token carries its own rule for the class, then it is limited by that rule, not the class's", () => {
    const options: AuthOptions = {
      tokens: registry({ 'stored-secret': stored, 'configured-secret': configured }, true),
      allowUnauthenticatedLoopback: false,
      rateLimits: createRateLimits({ ingest: { limit: 100, windowMs: 60_000 } }),
    };
    identify(request('stored-secret'), options, 'ingest');
    identify(request('stored-secret'), options, 'ingest');
    expect(failure(() => identify(request('stored-secret'), options, 'ingest'))).toMatchObject({
      status: 429,
      code: 'rate_limited',
    });
    // The class's rule for a token without one of its own.
    expect(identify(request('configured-secret'), options, 'ingest')).toBe(configured);
  });
});

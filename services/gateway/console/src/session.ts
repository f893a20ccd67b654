import type { ApiScope, WhoAmI } from '@screenfleet/contracts';
import { ApiError, createApi, type Api } from './api.js';

/**
 * Who the console acts as: a token pasted at sign-in, kept in this tab's sessionStorage (gone
 * with the tab, never sent but as a bearer header), or the gateway's tokenless loopback grant.
 * GET /auth/whoami says which scopes it holds, and the views offer only those.
 */
export interface Session {
  api: Api;
  who: WhoAmI;
}

export type Scope = ApiScope;

const tokenKey = 'screenfleet.console.token';

export const storedToken = (): string | undefined => sessionStorage.getItem(tokenKey) ?? undefined;
export const forgetToken = (): void => sessionStorage.removeItem(tokenKey);

/**
 * The session for `token` (the stored one when not given), or without a token the loopback
 * grant where the gateway offers it; undefined when a token is needed. A token is kept only
 * once the gateway has accepted it. Throws ApiError when the gateway refuses `token` or fails.
 */
export async function openSession(
  token: string | undefined,
  onUnauthorized: () => void,
): Promise<Session | undefined> {
  try {
    // Asked without the 401 hook: a refused token is this call's answer, not a sign-out.
    const who = await createApi(token).get<WhoAmI>('/auth/whoami');
    if (token) sessionStorage.setItem(tokenKey, token);
    return { api: createApi(token, onUnauthorized), who };
  } catch (error) {
    if (!token && error instanceof ApiError && error.status === 401) return undefined;
    throw error;
  }
}

export const can = (session: Session, scope: Scope): boolean => session.who.scopes.includes(scope);

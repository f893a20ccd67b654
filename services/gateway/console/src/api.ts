import type { ErrorBody } from '@screenfleet/contracts';

type FieldError = ErrorBody['errors'][number];

/** An answer other than 2xx, or no answer: what the API said, for the view to show as it is. */
export class ApiError extends Error {
  constructor(
    /** The HTTP status; 0 when the gateway did not answer. */
    readonly status: number,
    message: string,
    readonly errors: readonly FieldError[] = [],
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface Api {
  get<T>(path: string, query?: URLSearchParams): Promise<T>;
  /** No `body`: none is sent (POST /archive/run reads none). */
  post<T>(path: string, body?: unknown): Promise<T>;
  /** DELETE /tokens/{id} and the like: no body either way but the answer's. */
  delete<T>(path: string): Promise<T>;
}

/**
 * The public API as the console calls it: same origin, the token as a bearer header (never in
 * a URL, never a cookie: `credentials: 'omit'`), JSON both ways, nothing cached. `onUnauthorized`
 * hears every 401 (a token revoked while the page was open), so the page can ask for another.
 */
export function createApi(token: string | undefined, onUnauthorized?: () => void): Api {
  async function call<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers,
        body: body === undefined ? null : JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
        redirect: 'error',
      });
    } catch (error) {
      throw new ApiError(0, `the gateway did not answer (${(error as Error).message})`);
    }
    const answer = await readJson(response);
    if (response.ok) return answer as T;
    if (response.status === 401) onUnauthorized?.();
    throw toApiError(response, answer);
  }
  return {
    get: (path, query) => call('GET', query && query.size > 0 ? `${path}?${query}` : path),
    post: (path, body) => call('POST', path, body),
    delete: (path) => call('DELETE', path),
  };
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}

function toApiError(response: Response, answer: unknown): ApiError {
  const body = answer as Partial<ErrorBody> | undefined;
  if (typeof body?.message === 'string') {
    return new ApiError(response.status, body.message, body.errors ?? [], body.code);
  }
  return new ApiError(response.status, `${response.status} ${response.statusText}`.trim());
}

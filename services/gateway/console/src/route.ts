/**
 * Where the console is: the page's hash, `#/<view>/<path...>?<query>` (`#/search?q=report`,
 * later `#/devices/desk-1`). The hash never reaches the server, holds no secret, and keeps the
 * user's place across reloads and Back.
 */
export interface Route {
  view: string;
  /** What follows the view's name (a device name for the Device view). */
  path: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const [where = '', query = ''] = hash.replace(/^#\/?/, '').split('?', 2);
  const [view = '', ...path] = where.split('/').map((part) => safeDecode(part));
  return { view, path, query: new URLSearchParams(query) };
}

export function hashFor(
  view: string,
  path: readonly string[] = [],
  query?: URLSearchParams,
): string {
  const where = [view, ...path].map((part) => encodeURIComponent(part)).join('/');
  const search = query && query.size > 0 ? `?${query}` : '';
  return `#/${where}${search}`;
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

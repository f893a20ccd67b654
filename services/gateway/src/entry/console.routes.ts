import { Router, type Request, type Response } from 'express';
import { loadConsoleAssets, type ConsoleAsset, type ConsoleAssets } from './console-assets';

/**
 * GET /console: the fleet console, a page of static files that calls this same public API with
 * the user's token (ARCHITECTURE.md "Fleet view and console"); it has no route of its own
 * beyond its files. No token for the page and its files: they hold no data, and a browser cannot
 * send a bearer header on a navigation. The console's own code is services/gateway/console.
 *
 * The page's Content-Security-Policy allows scripts and styles from this origin only: no inline
 * script or style, no eval, nothing from another host; the API is reached on 'self'. The files
 * live under one versioned prefix (console-assets.ts), cached for a year as immutable; the page
 * itself is always asked again.
 */
export const consolePath = '/console';
export const consoleAssetsPrefix = '/console/assets/';
/** The assets' route as express writes it, also the metrics label of every asset request. */
export const consoleAssetsRoute = `${consoleAssetsPrefix}*asset`;

/** The console's routes: a client of the API, not part of it (openapi.routes.test.ts). */
export const consoleRoutePaths = [consolePath, consoleAssetsRoute];

export const consoleContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const oneYearS = 365 * 24 * 60 * 60;

function page({ id, files }: ConsoleAssets): string {
  const url = (name: string) => `${consoleAssetsPrefix}${id}/${name}`;
  // Every module up front, so the browser fetches them at once instead of import by import.
  const preloads = [...files.keys()]
    .filter((name) => name.endsWith('.js') && name !== 'main.js')
    .map((name) => `    <link rel="modulepreload" href="${url(name)}" />\n`)
    .join('');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>screenfleet console</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="${url('console.css')}" />
    <script type="module" src="${url('main.js')}"></script>
${preloads}  </head>
  <body>
    <div id="console"><noscript>The console needs JavaScript.</noscript></div>
  </body>
</html>
`;
}

export function consoleRoutes(): Router {
  const router = Router();
  // Read on first use, not at start: a gateway nobody opens the console of never holds it.
  let assets: ConsoleAssets | undefined;
  let html: string | undefined;
  const loaded = () => (assets ??= loadConsoleAssets());

  router.get(consolePath, (_req, res) => {
    html ??= page(loaded());
    res
      .set({
        'Content-Security-Policy': consoleContentSecurityPolicy,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        'Cross-Origin-Opener-Policy': 'same-origin',
        'Cache-Control': 'no-cache',
      })
      .type('html')
      .send(html);
  });

  router.get(consoleAssetsRoute, (req, res, next) => {
    const { id, files } = loaded();
    const prefix = `${consoleAssetsPrefix}${id}/`;
    // An exact name from the table, never a path on disk: nothing else can be read.
    const asset = req.path.startsWith(prefix)
      ? files.get(req.path.slice(prefix.length))
      : undefined;
    if (!asset) return next();
    sendAsset(req, res, asset);
  });
  return router;
}

function sendAsset(req: Request, res: Response, asset: ConsoleAsset): void {
  const gzip = req.acceptsEncodings('gzip', 'identity') === 'gzip';
  res.set({
    'Content-Type': asset.type,
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': `public, max-age=${oneYearS}, immutable`,
    Vary: 'Accept-Encoding',
    ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
  });
  res.send(gzip ? asset.gzip : asset.body);
}

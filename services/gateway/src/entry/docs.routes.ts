import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Router } from 'express';
import { openApiPath } from './openapi.routes';

/**
 * GET /docs: the API reference, Redoc rendering /openapi.json in the browser.
 *
 * Redoc's standalone bundle comes from the gateway's own node_modules (the `redoc` package) and
 * is served here, so the page loads nothing from the internet. Its file name carries Redoc's
 * version: the bundle can be cached for a year as immutable, and an upgrade changes the URL.
 *
 * No token, as for /openapi.json: the page and the bundle hold no data, only the description
 * of the API that anyone may read, and a browser cannot send a bearer token on a navigation.
 *
 * The page's Content-Security-Policy allows scripts from this origin only (no inline script:
 * Redoc starts itself on the <redoc> element). Redoc's styled-components write <style> tags,
 * hence 'unsafe-inline' for styles only. Redoc's search runs in a Worker built from a blob: URL,
 * which 'self' forbids, so search is off (`disable-search`); the sidebar lists every route.
 *
 * One thing in the bundle reaches out: the sidebar's "API docs by Redocly" footer shows a logo
 * from cdn.redoc.ly, with no option to turn it off. The served bundle points that image at an
 * empty data: URL instead; the image then fails to decode and Redoc hides it (its onError).
 */
export const docsPath = '/docs';

const redocPackage = require.resolve('redoc/package.json');
const redocVersion = (JSON.parse(readFileSync(redocPackage, 'utf8')) as { version: string })
  .version;
const bundleFile = join(dirname(redocPackage), 'bundles', 'redoc.standalone.js');
const redoclyLogo = '"https://cdn.redoc.ly/redoc/logo-mini.svg"';

/** Where the page loads Redoc from: versioned, so a year's immutable caching is safe. */
export const docsBundlePath = `${docsPath}/assets/redoc-${redocVersion}.standalone.js`;

/** The docs page's routes: a view of the API's document, not part of it (openapi.routes.test.ts). */
export const docsRoutePaths = [docsPath, docsBundlePath];

export const docsContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>screenfleet API reference</title>
    <link rel="icon" href="data:," />
  </head>
  <body>
    <redoc spec-url="${openApiPath}" disable-search></redoc>
    <script src="${docsBundlePath}"></script>
  </body>
</html>
`;

const oneYearS = 365 * 24 * 60 * 60;

/** Redoc's bundle, read once, with its one internet URL (the footer logo) made local. */
function readBundle(): Buffer {
  const source = readFileSync(bundleFile, 'utf8');
  // A Redoc upgrade that moves the logo fails the docs tests (no request leaves the page).
  return Buffer.from(source.replaceAll(redoclyLogo, '"data:,"'));
}

export function docsRoutes(): Router {
  const router = Router();
  let bundle: Buffer | undefined;
  router.get(docsPath, (_req, res) => {
    res
      .set({
        'Content-Security-Policy': docsContentSecurityPolicy,
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        // The page is small and names the bundle's version: always ask again.
        'Cache-Control': 'no-cache',
      })
      .type('html')
      .send(page);
  });
  router.get(docsBundlePath, (_req, res) => {
    // Read on first use, not at start: a gateway nobody reads the docs of never holds it.
    bundle ??= readBundle();
    res
      .set({
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': `public, max-age=${oneYearS}, immutable`,
      })
      .type('text/javascript')
      .send(bundle);
  });
  return router;
}

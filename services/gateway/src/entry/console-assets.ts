import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * The console's files, as the gateway serves them under one versioned prefix
 * (/console/assets/<id>/...): the console compiled by `tsc -b` (services/gateway/console ->
 * dist/console, ES modules), its stylesheet, and Preact's own ES modules from the gateway's
 * node_modules. Nothing is fetched from elsewhere. `id` is a hash of every file, so each release
 * has its own URLs and a year's immutable caching is safe.
 */
export interface ConsoleAsset {
  body: Buffer;
  /** Compressed once here; sent to every client that accepts gzip. */
  gzip: Buffer;
  type: string;
}

export interface ConsoleAssets {
  id: string;
  /** By path under the prefix: `main.js`, `views/search.view.js`, `vendor/preact.js`, ... */
  files: ReadonlyMap<string, ConsoleAsset>;
}

// Two levels under the package both in src/entry (tests) and dist/entry (production).
const packageRoot = path.join(__dirname, '..', '..');
const compiledDir = path.join(packageRoot, 'dist', 'console');
const stylesheet = path.join(packageRoot, 'console', 'static', 'console.css');

const types: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

export function loadConsoleAssets(): ConsoleAssets {
  if (!existsSync(path.join(compiledDir, 'main.js'))) {
    throw new Error(`the console is not built (${compiledDir}/main.js): run npm run build`);
  }
  const sources = new Map<string, Buffer>([
    ...compiledFiles(),
    ['console.css', readFileSync(stylesheet)],
    ['vendor/preact.js', readFileSync(require.resolve('preact'))],
    ['vendor/hooks.js', preactHooks()],
  ]);
  const hash = createHash('sha256');
  const files = new Map<string, ConsoleAsset>();
  for (const [name, body] of [...sources].sort(([a], [b]) => a.localeCompare(b))) {
    hash.update(name).update('\0').update(body).update('\0');
    files.set(name, { body, gzip: gzipSync(body, { level: 9 }), type: types[path.extname(name)]! });
  }
  return { id: hash.digest('hex').slice(0, 16), files };
}

/** The compiled modules (.js only: no declarations or build info), by path under the prefix. */
function compiledFiles(): Array<[string, Buffer]> {
  return readdirSync(compiledDir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.js'))
    .map((name) => [name.split(path.sep).join('/'), readFileSync(path.join(compiledDir, name))]);
}

/**
 * preact/hooks' module imports "preact" by name, which a browser cannot resolve without an
 * import map (an inline script the page's policy forbids). It is pointed at ./preact.js, served
 * beside it. A Preact release that imports otherwise fails here, at the first request.
 */
function preactHooks(): Buffer {
  const source = readFileSync(require.resolve('preact/hooks'), 'utf8');
  const bare = /from\s*"preact"/g;
  const found = source.match(bare)?.length ?? 0;
  if (found !== 1 || /(?:import|from)\s*["'](?!\.\/preact\.js)/.test(source.replace(bare, ''))) {
    throw new Error(
      'preact/hooks no longer has exactly one import, of "preact": update console-assets.ts',
    );
  }
  return Buffer.from(source.replace(bare, 'from"./preact.js"'));
}

import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The checkout's root, whether this file runs as TypeScript from bin/ (tests, tsx) or compiled
 * from bin/dist/ (`npm start`): the nearest folder up from here that holds package-lock.json.
 */
export const projectRoot = (() => {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package-lock.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package-lock.json above ${__dirname}`);
  }
})();

/**
 * `npm run search:backfill [-- --chunk-size N]`: makes the items a MongoDB/FerretDB content
 * store held before search existed findable by GET /search (it gives each the search fields the
 * store now writes at insert). Reads the ingest worker's MONGODB_URL and MONGODB_DATABASE.
 * Progress goes to stderr, the final counts to stdout as one JSON line. Safe while the services
 * run, safe to stop and repeat: a second run reports nothing to do. The embedded mode needs no
 * backfill: opening an older SQLite file indexes its items once.
 */
import { parseArgs } from 'node:util';
import { defineConfig, loadConfig, runMain } from '@screenfleet/runtime';
import { backfillSearchTerms } from '@screenfleet/storage';
import { ingestConfigSpec } from '../config';

const backfillConfigSpec = defineConfig({
  mongodbUrl: ingestConfigSpec.mongodbUrl,
  database: ingestConfigSpec.database,
});

void runMain(
  async () => {
    const { values } = parseArgs({ options: { 'chunk-size': { type: 'string' } } });
    const chunkSize = values['chunk-size'] === undefined ? 500 : Number(values['chunk-size']);
    if (!Number.isInteger(chunkSize) || chunkSize < 1 || chunkSize > 10_000) {
      throw new Error('--chunk-size must be an integer from 1 to 10000');
    }
    const config = loadConfig(backfillConfigSpec);
    let shown = Date.now();
    const report = await backfillSearchTerms({
      url: config.mongodbUrl,
      database: config.database,
      chunkSize,
      onProgress: (sofar) => {
        if (Date.now() - shown < 2000) return;
        shown = Date.now();
        process.stderr.write(`search:backfill: ${sofar.updated} of ${sofar.scanned} updated\n`);
      },
    });
    process.stdout.write(`${JSON.stringify(report)}\n`);
  },
  { service: 'search-backfill' },
);

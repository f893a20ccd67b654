/**
 * `npm run dead-letters:replay [-- --limit N]`: puts dead-lettered content batches back.
 *
 * - Distributed (RABBITMQ_URL set): moves them from ingest.content.dead back to the capture
 *   exchange, where the ingest queue takes them again. Each message is published (confirmed)
 *   before it is acked: a crash replays one twice (the worker's ids make that harmless), never
 *   loses one.
 * - Embedded (no RABBITMQ_URL): the dead_letters table of DATA_DIR's SQLite file (./data by
 *   default): each batch is written to the content store as the ingest worker writes it, then
 *   removed from the table; one the store refuses again stays, and is listed. A running server
 *   on the same file is fine: SQLite serialises the two writers.
 *
 * Without --limit, at most the letters present at start are replayed, so batches that die again
 * are not replayed in a loop.
 */
import { existsSync } from 'node:fs';
import { exchangeNames, queueNames } from '@screenfleet/contracts';
import { moveMessages } from '@screenfleet/bus';
import { embeddedDatabaseFile, openEmbeddedStores } from '@screenfleet/modes';
import { defineConfig, loadConfig } from '@screenfleet/runtime';
import { ingestConfigSpec } from '../config';
import { replayDeadLetters } from '../domain/replay-dead-letters';

/** Which dead letters: the broker's when RABBITMQ_URL is set, else the embedded mode's file. */
const replayConfigSpec = defineConfig({
  rabbitmqUrl: {
    ...ingestConfigSpec.rabbitmqUrl,
    optional: true,
    doc: "RabbitMQ URL (or the nodes of one cluster, comma-separated) of the distributed mode; unset: the embedded mode's SQLite file under DATA_DIR",
  },
  dataDir: {
    env: 'DATA_DIR',
    kind: 'string',
    default: 'data',
    doc: "Without RABBITMQ_URL: the embedded mode's data directory (its SQLite file)",
  },
});

function parseLimit(argv: string[]): number | undefined {
  const at = argv.findIndex((arg) => arg === '--limit' || arg.startsWith('--limit='));
  if (at < 0) return undefined;
  const raw = argv[at]!.includes('=') ? argv[at]!.split('=')[1] : argv[at + 1];
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`--limit must be a positive integer`);
  return limit;
}

async function fromBroker(url: readonly string[], limit: number | undefined): Promise<void> {
  const moved = await moveMessages({
    url,
    from: queueNames.ingestContentDead,
    exchange: exchangeNames.capture,
    limit,
    connectionName: 'dead-letters-replay',
  });
  process.stdout.write(
    `replayed ${moved} message(s) from ${queueNames.ingestContentDead} to ${exchangeNames.capture}\n`,
  );
}

async function fromDataDir(dataDir: string, limit: number | undefined): Promise<void> {
  const file = embeddedDatabaseFile(dataDir);
  if (!existsSync(file)) {
    throw new Error(`no SQLite file at ${file} (set DATA_DIR, or RABBITMQ_URL for the broker's)`);
  }
  const stores = await openEmbeddedStores(file);
  try {
    const report = await replayDeadLetters(stores.deadLetters, stores.content, limit);
    for (const { seq, reason } of report.left) {
      process.stdout.write(`left dead letter ${seq}: ${reason}\n`);
    }
    process.stdout.write(
      `replayed ${report.replayed} dead letter(s) from ${file} into its content store; ${report.left.length} left\n`,
    );
  } finally {
    await stores.close();
  }
}

async function main(): Promise<void> {
  const limit = parseLimit(process.argv.slice(2));
  const config = loadConfig(replayConfigSpec);
  if (config.rabbitmqUrl) await fromBroker(config.rabbitmqUrl, limit);
  else await fromDataDir(config.dataDir, limit);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `dead-letters:replay failed: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exitCode = 1;
});

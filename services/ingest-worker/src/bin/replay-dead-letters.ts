/**
 * `npm run dead-letters:replay [-- --limit N]`: moves dead-lettered content batches from
 * ingest.content.dead back to the capture exchange, where the ingest queue takes them again.
 * Each message is published (confirmed) before it is acked: a crash replays one twice (the
 * worker's ids make that harmless), never loses one. Without --limit, at most the messages
 * present at start are moved, so batches that die again are not replayed in a loop.
 */
import { exchangeNames, queueNames } from '@screenfleet/contracts';
import { moveMessages } from '@screenfleet/bus';

function parseLimit(argv: string[]): number | undefined {
  const at = argv.findIndex((arg) => arg === '--limit' || arg.startsWith('--limit='));
  if (at < 0) return undefined;
  const raw = argv[at]!.includes('=') ? argv[at]!.split('=')[1] : argv[at + 1];
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`--limit must be a positive integer`);
  return limit;
}

async function main(): Promise<void> {
  const url = process.env.RABBITMQ_URL;
  if (!url) throw new Error('RABBITMQ_URL is not set (the broker holding ingest.content.dead)');
  const moved = await moveMessages({
    url,
    from: queueNames.ingestContentDead,
    exchange: exchangeNames.capture,
    limit: parseLimit(process.argv.slice(2)),
    connectionName: 'dead-letters-replay',
  });
  process.stdout.write(
    `replayed ${moved} message(s) from ${queueNames.ingestContentDead} to ${exchangeNames.capture}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(
    `dead-letters:replay failed: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exitCode = 1;
});

import type { Outcome } from '@screenfleet/bus';
import { queueNames } from '@screenfleet/contracts';
import { Counter, Gauge, Histogram, type Registry } from '@screenfleet/runtime';

/** How a search.rpc request ended: answered, or the refusal's code. */
export const searchOutcomes = [
  'ok',
  'validation_failed',
  'store_unavailable',
  'deadline_exceeded',
  'failed',
] as const;
export type SearchOutcome = (typeof searchOutcomes)[number];

export function createIngestMetrics(
  registry: Registry,
  queueDepth: (queue: string) => Promise<number>,
) {
  const registers = [registry];
  const queues = [queueNames.ingestContent, queueNames.ingestContentDead];
  const metrics = {
    // Read from the broker at scrape time: the backlog (consumer lag) and the dead letters.
    queueDepth: new Gauge({
      name: 'ingest_queue_messages',
      help: 'Messages ready in the ingest queue and its dead-letter queue (-1 when unknown)',
      labelNames: ['queue'] as const,
      registers,
      async collect() {
        const depths = await Promise.all(queues.map((queue) => queueDepth(queue).catch(() => -1)));
        queues.forEach((queue, i) => this.set({ queue }, depths[i] ?? -1));
      },
    }),
    itemsWritten: new Counter({
      name: 'ingest_items_written_total',
      help: 'Content items newly stored',
      registers,
    }),
    itemsAlreadyStored: new Counter({
      name: 'ingest_items_already_stored_total',
      help: 'Content items that were stored before (redelivery or re-sent batch)',
      registers,
    }),
    writeDuration: new Histogram({
      name: 'ingest_write_duration_seconds',
      help: 'Duration of one grouped insert, store outage waits included',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers,
    }),
    writeBatchItems: new Histogram({
      name: 'ingest_write_batch_items',
      help: 'Items per grouped insert',
      buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000],
      registers,
    }),
    redeliveries: new Counter({
      name: 'ingest_redeliveries_total',
      help: 'Messages delivered more than once',
      registers,
    }),
    storeRetries: new Counter({
      name: 'ingest_store_retries_total',
      help: 'Inserts retried because the store was unavailable',
      registers,
    }),
    outcomes: new Counter({
      name: 'ingest_messages_total',
      help: 'Messages handled, by outcome (ack, retry, dead)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    searches: new Counter({
      name: 'ingest_search_requests_total',
      help: 'search.rpc requests answered, by outcome (ok, validation_failed, store_unavailable, deadline_exceeded, failed)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    searchDuration: new Histogram({
      name: 'ingest_search_duration_seconds',
      help: 'From taking a search.rpc request to its reply (the store search and the mapping)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers,
    }),
  };
  for (const outcome of searchOutcomes) metrics.searches.inc({ outcome }, 0);
  // Every outcome from 0, so increase() in the alerts sees the first dead letter of a process.
  const outcomes: Record<Outcome, 0> = { ack: 0, retry: 0, dead: 0 };
  for (const outcome of Object.keys(outcomes)) metrics.outcomes.inc({ outcome }, 0);
  return metrics;
}

export type IngestMetrics = ReturnType<typeof createIngestMetrics>;

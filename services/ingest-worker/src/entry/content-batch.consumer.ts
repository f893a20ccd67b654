import { SCHEMA_VERSION, validators, type ContentBatch } from '@screenfleet/contracts';
import type { Delivery, Outcome } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';
import type { ContentDocument, ContentStore } from '@screenfleet/storage';
import { createMicroBatcher, type MicroBatcherOptions } from '../domain/micro-batcher';
import { toDocuments } from '../domain/to-documents';
import { writeBatches, type RetryPolicy } from '../domain/write-batches';
import type { IngestMetrics } from '../metrics';

export interface ContentBatchConsumerDeps {
  store: Pick<ContentStore, 'insertItems'>;
  metrics: IngestMetrics;
  logger: Logger;
  grouping: MicroBatcherOptions;
  retry: RetryPolicy;
}

/** Translates content.batch messages into grouped writes; the returned outcome decides the ack. */
export function createContentBatchConsumer({
  store,
  metrics,
  logger,
  grouping,
  retry,
}: ContentBatchConsumerDeps) {
  const batcher = createMicroBatcher<ContentDocument[], Outcome>(async (groups) => {
    metrics.writeBatchItems.observe(groups.reduce((n, g) => n + g.length, 0));
    const stopTimer = metrics.writeDuration.startTimer();
    const report = await writeBatches(store, groups, retry);
    stopTimer();
    metrics.itemsWritten.inc(report.totals.inserted);
    metrics.itemsAlreadyStored.inc(report.totals.alreadyStored);
    return report.outcomes.map((outcome) => {
      if (outcome.written) return 'ack';
      logger.warn({ err: outcome.error }, 'content batch not written; it will be redelivered');
      return 'retry';
    });
  }, grouping);

  async function handle(delivery: Delivery<unknown>): Promise<Outcome> {
    if (delivery.redelivered) metrics.redeliveries.inc();
    const outcome = await decide(delivery);
    metrics.outcomes.inc({ outcome });
    return outcome;
  }

  async function decide({ envelope }: Delivery<unknown>): Promise<Outcome> {
    const errors =
      envelope.type !== 'content.batch' || envelope.schema_version !== SCHEMA_VERSION
        ? [{ path: 'type', rule: 'const', detail: `not a content.batch v${SCHEMA_VERSION}` }]
        : validators.contentBatch.check(envelope.payload);
    if (errors.length > 0) {
      // It will never become valid: retrying would only delay the dead letter.
      logger.error(
        { messageId: envelope.message_id, errors },
        'invalid content batch: dead-lettered',
      );
      return 'dead';
    }
    const documents = toDocuments(envelope.payload as ContentBatch);
    if (documents.length === 0) return 'ack';
    return batcher.add(documents, documents.length);
  }

  return { handle, drain: () => batcher.drain() };
}

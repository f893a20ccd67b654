import {
  checkMessage,
  StoreUnavailableError,
  validators,
  type ContentBatch,
} from '@screenfleet/contracts';
import type { Delivery, Outcome } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';
import {
  ContentRejectedError,
  type NewContentDocument,
  type ContentStore,
} from '@screenfleet/storage';
import {
  createMicroBatcher,
  writeBatches,
  type MessageOutcome,
  type MicroBatcherOptions,
  type RetryPolicy,
} from '../domain/grouped-writes';
import { toDocuments } from '../domain/to-documents';
import type { IngestMetrics } from '../metrics';

export interface ContentBatchConsumerDeps {
  store: Pick<ContentStore, 'insertItems'>;
  metrics: IngestMetrics;
  logger: Logger;
  grouping: MicroBatcherOptions;
  retry: RetryPolicy;
  /**
   * Waits before giving back a message that failed for an unknown reason (resolves early when
   * the worker stops), so it is not redelivered at once and dead-lettered within a second.
   */
  pauseBeforeRedelivery: (deliveryCount: number) => Promise<void>;
}

/** Translates content.batch messages into grouped writes; the returned outcome decides the ack. */
export function createContentBatchConsumer({
  store,
  metrics,
  logger,
  grouping,
  retry,
  pauseBeforeRedelivery,
}: ContentBatchConsumerDeps) {
  const batcher = createMicroBatcher<NewContentDocument[], MessageOutcome>(async (groups) => {
    metrics.writeBatchItems.observe(groups.reduce((n, g) => n + g.length, 0));
    const stopTimer = metrics.writeDuration.startTimer();
    const report = await writeBatches(store, groups, retry);
    stopTimer();
    metrics.itemsWritten.inc(report.totals.inserted);
    metrics.itemsAlreadyStored.inc(report.totals.alreadyStored);
    return report.outcomes;
  }, grouping);

  /**
   * Written: ack. Rejected by the store (too large, invalid): it can never succeed, dead-letter
   * it now. Store unavailable (only when the worker stops mid-outage): give it back. Anything
   * else: give it back after a pause growing with its deliveries, so the delivery limit spans
   * about a minute rather than ten immediate retries.
   */
  async function settle(
    outcome: MessageOutcome,
    delivery: Delivery<unknown>,
    items: number,
  ): Promise<Outcome> {
    // The gateway's request id (X-Request-Id) travels as the correlation id: one grep follows a
    // batch from the HTTP request to its write.
    const messageId = delivery.envelope.message_id;
    const requestId = delivery.envelope.correlation_id;
    if (outcome.written) {
      logger.info({ messageId, requestId, items }, 'content batch written');
      return 'ack';
    }
    const { error } = outcome;
    if (error instanceof ContentRejectedError) {
      logger.error(
        { err: error, messageId, requestId },
        'content batch refused by the store: dead-lettered',
      );
      return 'dead';
    }
    if (error instanceof StoreUnavailableError) return 'retry';
    logger.warn(
      { err: error, messageId, requestId, deliveryCount: delivery.deliveryCount },
      'content batch not written; it will be redelivered',
    );
    await pauseBeforeRedelivery(delivery.deliveryCount);
    return 'retry';
  }

  async function handle(delivery: Delivery<unknown>): Promise<Outcome> {
    if (delivery.redelivered) metrics.redeliveries.inc();
    const outcome = await decide(delivery);
    metrics.outcomes.inc({ outcome });
    return outcome;
  }

  async function decide(delivery: Delivery<unknown>): Promise<Outcome> {
    const { envelope } = delivery;
    const errors = checkMessage(envelope, 'content.batch', validators.contentBatch);
    if (errors.length > 0) {
      // It will never become valid: retrying would only delay the dead letter.
      logger.error(
        { messageId: envelope.message_id, requestId: envelope.correlation_id, errors },
        'invalid content batch: dead-lettered',
      );
      return 'dead';
    }
    // Each item names its message: the store counts a message's items once, redelivered or not.
    const documents = toDocuments(envelope.payload as ContentBatch).map((doc) => ({
      ...doc,
      batch: envelope.message_id,
    }));
    if (documents.length === 0) return 'ack';
    return settle(await batcher.add(documents, documents.length), delivery, documents.length);
  }

  return { handle, drain: () => batcher.drain() };
}

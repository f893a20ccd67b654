import {
  checkMessage,
  StoreUnavailableError,
  validators,
  type AuditRecord,
} from '@screenfleet/contracts';
import type { Delivery, Outcome } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';
import {
  ContentRejectedError,
  type AuditRow,
  type AuditStore,
  type AuditValue,
} from '@screenfleet/storage';
import {
  createMicroBatcher,
  writeBatches,
  type MessageOutcome,
  type MicroBatcherOptions,
  type RetryPolicy,
} from '../domain/grouped-writes';
import type { IngestMetrics } from '../metrics';

export interface AuditConsumerDeps {
  store: Pick<AuditStore, 'insertRows'>;
  metrics: Pick<
    IngestMetrics,
    'auditRowsWritten' | 'auditRowsAlreadyStored' | 'auditMessages' | 'redeliveries'
  >;
  logger: Logger;
  grouping: MicroBatcherOptions;
  /** A store outage is waited out as the content consumer does (see grouped-writes.ts). */
  retry: RetryPolicy;
  /** Waits before giving back a record that failed for an unknown reason (as content batches). */
  pauseBeforeRedelivery: (deliveryCount: number) => Promise<void>;
}

/**
 * Translates audit.record messages (the gateway's audited facts, ADR 0019) into audit rows,
 * several deliveries to one insert; the returned outcome decides the ack. A row's id is the
 * record's, so a redelivered record is stored once.
 */
export function createAuditConsumer({
  store,
  metrics,
  logger,
  grouping,
  retry,
  pauseBeforeRedelivery,
}: AuditConsumerDeps) {
  const batcher = createMicroBatcher<AuditRow[], MessageOutcome>(async (groups) => {
    const report = await writeBatches(
      { insertItems: (rows: AuditRow[]) => store.insertRows(rows) },
      groups,
      retry,
    );
    metrics.auditRowsWritten.inc(report.totals.inserted);
    metrics.auditRowsAlreadyStored.inc(report.totals.alreadyStored);
    return report.outcomes;
  }, grouping);

  async function handle(delivery: Delivery<unknown>): Promise<Outcome> {
    if (delivery.redelivered) metrics.redeliveries.inc();
    const outcome = await decide(delivery);
    metrics.auditMessages.inc({ outcome });
    return outcome;
  }

  async function decide(delivery: Delivery<unknown>): Promise<Outcome> {
    const { envelope } = delivery;
    const messageId = envelope.message_id;
    const errors = checkMessage(envelope, 'audit.record', validators.auditRecord);
    if (errors.length > 0) {
      // It will never become valid: retrying would only delay the dead letter.
      logger.error({ messageId, errors }, 'invalid audit record: dropped as dead');
      return 'dead';
    }
    const outcome = await batcher.add([toAuditRow(envelope.payload as AuditRecord)], 1);
    if (outcome.written) return 'ack';
    const { error } = outcome;
    if (error instanceof ContentRejectedError) {
      logger.error({ err: error, messageId }, 'audit record refused by the store: dropped as dead');
      return 'dead';
    }
    // Only when the worker stops mid-outage: the record goes back to the queue for another.
    if (error instanceof StoreUnavailableError) return 'retry';
    logger.warn(
      { err: error, messageId, deliveryCount: delivery.deliveryCount },
      'audit record not written; it will be redelivered',
    );
    await pauseBeforeRedelivery(delivery.deliveryCount);
    return 'retry';
  }

  return { handle, drain: () => batcher.drain() };
}

/** A record as the store's row: the wire's snake_case and ISO times as the port's fields. */
export function toAuditRow(record: AuditRecord): AuditRow {
  return {
    id: record.id,
    at: new Date(record.at),
    actor: record.actor,
    action: record.action,
    device: record.device,
    outcome: record.outcome,
    outcomeCode: record.outcome_code,
    durationMs: record.duration_ms,
    // Parsed from JSON: plain values only, as AuditValue says.
    details: record.details as { [key: string]: AuditValue },
  };
}

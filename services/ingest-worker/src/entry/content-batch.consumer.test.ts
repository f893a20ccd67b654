import { createEnvelope, StoreUnavailableError, type ContentBatch } from '@screenfleet/contracts';
import type { Delivery } from '@screenfleet/bus';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import {
  ContentRejectedError,
  type ContentDocument,
  type InsertResult,
} from '@screenfleet/storage';
import { createIngestMetrics } from '../metrics';
import { createContentBatchConsumer } from './content-batch.consumer';

// The store is a fake: this is the mapping from store errors to ack, retry and dead letter.
function delivery(deliveryCount = 0): Delivery<unknown> {
  const payload: ContentBatch = {
    received_at: '2026-11-22T12:00:00.000Z',
    request: {
      device_name: 'desk-1',
      content: { content_type: 'frames', data: [{ file_path: 'a.png' }] },
    },
  };
  return { envelope: createEnvelope('content.batch', payload), redelivered: false, deliveryCount };
}

function consumerWith(insertItems: (docs: ContentDocument[]) => Promise<InsertResult>) {
  const pauses: number[] = [];
  const consumer = createContentBatchConsumer({
    store: { insertItems },
    metrics: createIngestMetrics(createMetrics(), () => Promise.resolve(0)),
    logger: createLogger({ service: 'test', level: 'silent' }),
    grouping: { maxWeight: 1, maxWaitMs: 1 },
    retry: { delayMs: () => 1, keepTrying: () => true, onRetry: () => undefined },
    pauseBeforeRedelivery: (count) => {
      pauses.push(count);
      return Promise.resolve();
    },
  });
  return { consumer, pauses };
}

describe('content batch consumer', () => {
  // The store adapter turns Unauthorized (13), not-primary, disk full... into this error.
  it('when the store is unavailable for a while, then the batch waits it out and is acked', async () => {
    let calls = 0;
    const { consumer, pauses } = consumerWith(async (docs) => {
      calls += 1;
      if (calls <= 3)
        throw new StoreUnavailableError('content store unavailable: Unauthorized (13)');
      return { inserted: docs.length, alreadyStored: 0 };
    });

    expect(await consumer.handle(delivery())).toBe('ack');
    expect(calls).toBe(4);
    expect(pauses).toEqual([]);
  });

  it('when the store refuses the documents for good, then the batch is dead-lettered at once', async () => {
    const { consumer } = consumerWith(() =>
      Promise.reject(new ContentRejectedError('document too large')),
    );
    expect(await consumer.handle(delivery())).toBe('dead');
  });

  it('when the failure is of no known kind, then the batch is given back after a pause that grows with its deliveries', async () => {
    const { consumer, pauses } = consumerWith(() => Promise.reject(new Error('odd')));

    expect(await consumer.handle(delivery(3))).toBe('retry');
    expect(pauses).toEqual([3]);
  });
});

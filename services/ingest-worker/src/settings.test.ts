import { loadConfig, withoutServerVars } from '@screenfleet/runtime';
import { ingestConfigSpec } from './config';
import { ingestWorkerSettings } from './settings';

describe('ingestWorkerSettings', () => {
  it('when the INGEST_* variables are set, then the worker gets them, in either mode', () => {
    const env = {
      INGEST_PREFETCH: '7',
      INGEST_MAX_BYTES_IN_FLIGHT: '2097152',
      INGEST_GROUP_ITEMS: '50',
      INGEST_GROUP_WAIT: '20',
      INGEST_SEARCH_PREFETCH: '2',
      INGEST_RETRY_INITIAL: '100',
      INGEST_RETRY_MAX: '1s',
      CAPTURE_STALL_AFTER: '2m',
    };
    const expected = {
      prefetch: 7,
      maxBytesInFlight: 2 * 1024 * 1024,
      grouping: { maxWeight: 50, maxWaitMs: 20 },
      retry: { initialMs: 100, maxMs: 1000 },
      searchPrefetch: 2,
      captureStallAfterMs: 120_000,
    };
    const distributed = loadConfig(ingestConfigSpec, {
      ...env,
      RABBITMQ_URL: 'amqp://127.0.0.1',
      MONGODB_URL: 'mongodb://127.0.0.1',
    });
    expect(ingestWorkerSettings(distributed)).toEqual(expected);
    expect(ingestWorkerSettings(loadConfig(withoutServerVars(ingestConfigSpec), env))).toEqual(
      expected,
    );
  });
});

import { defineConfig, serviceConfigSpec } from '@screenfleet/runtime';

export const ingestConfigSpec = defineConfig({
  ...serviceConfigSpec('INGEST', 9465),
  mongodbUrl: {
    env: 'MONGODB_URL',
    kind: 'url',
    protocols: ['mongodb', 'mongodb+srv'],
    secret: true,
    doc: 'MongoDB URL',
  },
  database: {
    env: 'MONGODB_DATABASE',
    kind: 'string',
    default: 'screenfleet',
    doc: 'Database of the content store',
  },
  connectionName: {
    env: 'INGEST_CONNECTION_NAME',
    kind: 'string',
    default: 'ingest-worker',
    doc: 'Name this worker shows the broker (rabbitmqctl list_connections)',
  },
  prefetch: {
    env: 'INGEST_PREFETCH',
    kind: 'integer',
    min: 1,
    max: 1000,
    default: 32,
    doc: 'Unacknowledged messages per worker',
  },
  maxBytesInFlight: {
    env: 'INGEST_MAX_BYTES_IN_FLIGHT',
    kind: 'integer',
    min: 1024 * 1024,
    max: 4 * 1024 * 1024 * 1024,
    // Prefetch counts messages, which range from a few KB to 16 MiB: this bounds the bodies
    // handled at once (decoded documents take a few times as much again).
    default: 64 * 1024 * 1024,
    doc: 'Bytes of message bodies handled at once; beyond it the worker stops taking deliveries',
  },
  groupItems: {
    env: 'INGEST_GROUP_ITEMS',
    kind: 'integer',
    min: 1,
    max: 20000,
    // Measured with bench:ingest on FerretDB: several concurrent inserts of ~100 items beat
    // fewer large ones (1,000 items: ratio 0.5-0.65 vs 0.8-0.86), so small batches are grouped
    // up to this and large ones are written as they come.
    default: 100,
    doc: "Items that trigger one grouped insert (distributed mode; the embedded mode's SQLite writer groups commits itself)",
  },
  groupWait: {
    env: 'INGEST_GROUP_WAIT',
    kind: 'duration',
    default: 10,
    doc: 'Longest wait for more messages before inserting (distributed mode)',
  },
  captureStallAfter: {
    env: 'CAPTURE_STALL_AFTER',
    kind: 'duration',
    default: 300000,
    doc: 'A device that was sending and has sent nothing for this long is stalled: ingest_device_capture_stalled (the DeviceCaptureStalled alert) says 1; give the gateways the same value',
  },
  searchPrefetch: {
    env: 'INGEST_SEARCH_PREFETCH',
    kind: 'integer',
    min: 1,
    max: 64,
    default: 4,
    doc: 'GET /search requests one worker answers at once (search.rpc); more wait for this or another worker',
  },
  retryInitial: {
    env: 'INGEST_RETRY_INITIAL',
    kind: 'duration',
    default: 200,
    doc: 'First wait after a store outage',
  },
  retryMax: {
    env: 'INGEST_RETRY_MAX',
    kind: 'duration',
    default: 10000,
    doc: 'Longest wait between store retries',
  },
});

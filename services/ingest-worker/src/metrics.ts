import type { Outcome } from '@screenfleet/bus';
import {
  captureStatusOf,
  lastItemOf,
  queueNames,
  type DeviceListing,
} from '@screenfleet/contracts';
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

/** Devices whose last batch is older than this are left out of the per-device gauges. */
export const DEVICE_GAUGE_HORIZON_MS = 30 * 24 * 3_600_000;

/** What the per-device gauges read at scrape time (absent: no such gauges, e.g. unit tests). */
export interface FleetSource {
  /** The store's listing rows of every device; rejects when the store cannot answer. */
  listing(): Promise<DeviceListing[]>;
  /** CAPTURE_STALL_AFTER. */
  stallAfterMs: number;
}

export function createIngestMetrics(
  registry: Registry,
  queueDepth: (queue: string) => Promise<number>,
  fleet?: FleetSource,
) {
  const registers = [registry];
  // One read of the counters serves both per-device gauges of a scrape.
  let read: { at: number; listing: Promise<DeviceListing[] | undefined> } | undefined;
  const fleetNow = () => {
    if (!fleet) return Promise.resolve(undefined);
    const now = Date.now();
    if (!read || now - read.at > 1000) {
      // A store that does not answer within 1 s does not hold the scrape up.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), 1000);
      });
      // A source that throws rather than rejects must not fail the scrape either.
      const listing = Promise.resolve()
        .then(() => fleet.listing())
        .catch(() => undefined);
      read = {
        at: now,
        listing: Promise.race([listing, late]).finally(() => clearTimeout(timer)),
      };
    }
    return read.listing;
  };
  /**
   * Sets a per-device gauge from the counters: devices seen in the last 30 days only, so the
   * series stay bounded. When the store cannot answer, the gauge keeps its last values.
   */
  const perDevice = (value: (device: DeviceListing, nowMs: number) => number | undefined) =>
    async function collect(this: Gauge<'device'>) {
      const listing = await fleetNow();
      if (!listing) return;
      const now = Date.now();
      this.reset();
      for (const device of listing) {
        const last = device.last_received_ms ?? 0;
        if (now - last > DEVICE_GAUGE_HORIZON_MS) continue;
        const v = value(device, now);
        if (v !== undefined) this.set({ device: device.device_name }, v);
      }
    };
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
    ...(fleet
      ? {
          deviceLastItem: new Gauge({
            name: 'ingest_device_last_item_timestamp_seconds',
            help: "A device's newest stored item time (Unix seconds), for devices seen in the last 30 days; every ingest worker reports the same: aggregate with max",
            labelNames: ['device'] as const,
            registers,
            collect: perDevice((device) => {
              const last = lastItemOf(device);
              return last === null ? undefined : last / 1000;
            }),
          }),
          deviceStalled: new Gauge({
            name: 'ingest_device_capture_stalled',
            help: '1 when a device that was sending has sent nothing for CAPTURE_STALL_AFTER (GET /devices capture_status stalled), else 0; devices seen in the last 30 days',
            labelNames: ['device'] as const,
            registers,
            collect: perDevice((device, now) =>
              captureStatusOf(device, now, fleet.stallAfterMs) === 'stalled' ? 1 : 0,
            ),
          }),
        }
      : {}),
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
    tokensRequests: new Counter({
      name: 'ingest_tokens_requests_total',
      help: 'tokens.rpc requests answered, by op (snapshot, create, enrol...; invalid when unreadable) and outcome (ok or the refusal code)',
      labelNames: ['op', 'outcome'] as const,
      registers,
    }),
    auditRowsWritten: new Counter({
      name: 'ingest_audit_rows_written_total',
      help: 'Audit rows newly stored: audit.record messages and the token changes this worker made',
      registers,
    }),
    auditRowsAlreadyStored: new Counter({
      name: 'ingest_audit_rows_already_stored_total',
      help: 'audit.record messages whose row was stored before (a redelivery)',
      registers,
    }),
    auditMessages: new Counter({
      name: 'ingest_audit_messages_total',
      help: 'audit.record messages handled, by outcome (ack, retry, dead)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    auditRowsNotWritten: new Counter({
      name: 'ingest_audit_rows_not_written_total',
      help: "Audit rows of this worker's token changes the store did not take (the change was done; the row is in the log)",
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
  for (const outcome of Object.keys(outcomes)) {
    metrics.outcomes.inc({ outcome }, 0);
    metrics.auditMessages.inc({ outcome }, 0);
  }
  return metrics;
}

export type IngestMetrics = ReturnType<typeof createIngestMetrics>;

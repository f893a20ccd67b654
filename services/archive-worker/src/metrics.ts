import type { ArchiveStatus } from '@screenfleet/contracts';
import { Counter, Gauge, Histogram, type Registry } from '@screenfleet/runtime';
import type { PassOutcome } from './domain/archive-pass';

/** How long one status read serves the gauges: one scrape (they all ask at once). */
const STATUS_FRESH_MS = 1000;
/** Longest a scrape waits for a status read: well under Prometheus's scrape timeout. */
const STATUS_WAIT_MS = 1000;

/**
 * Cumulative counters for this process; the state's counters are the archive's lifetime ones.
 * The archive_* gauges without _total are GET /archive/status at scrape time (the worker's
 * snapshot of the shared state, at most a second old): every worker reports the same values
 * (aggregate them with max, not sum).
 */
export function createArchiveMetrics(
  registry: Registry,
  status: () => Promise<ArchiveStatus> = () => Promise.reject(new Error('no status source')),
) {
  const registers = [registry];
  const statusReader = createStatusReader(status);
  const statusGauge = (name: string, help: string, value: (s: ArchiveStatus) => number) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        // No read yet, or the store unreachable: the last values stay, and
        // archive_status_read_ok says they are not current.
        const current = await statusReader.latest();
        if (current) this.set(value(current));
      },
    });
  new Gauge({
    name: 'archive_status_read_ok',
    help: '1 when the archive status gauges come from a read of the state that just succeeded; 0 when it failed or took over 1 s (the gauges then keep their last values)',
    registers,
    async collect() {
      await statusReader.latest();
      this.set(statusReader.ok() ? 1 : 0);
    },
  });
  const seconds = (iso: string | null) => (iso ? Date.parse(iso) / 1000 : 0);
  const metrics = {
    chunks: new Counter({
      name: 'archive_chunks_uploaded_total',
      help: 'Chunks uploaded, verified and recorded',
      registers,
    }),
    items: new Counter({
      name: 'archive_items_archived_total',
      help: 'Content items moved to the archive store',
      registers,
    }),
    mediaFiles: new Counter({
      name: 'archive_media_files_uploaded_total',
      help: 'Media files uploaded with their chunk',
      registers,
    }),
    mediaSkipped: new Counter({
      name: 'archive_media_files_skipped_total',
      help: 'Media files of archived items not uploaded (listed in the manifest), by reason (missing, refused)',
      labelNames: ['reason'] as const,
      registers,
    }),
    mediaNotRemoved: new Counter({
      name: 'archive_media_files_not_removed_total',
      help: 'Archived media files that could not be deleted locally (left on disk)',
      registers,
    }),
    bytes: new Counter({
      name: 'archive_uploaded_bytes_total',
      help: 'Bytes written to the archive store (chunks, manifests, media)',
      registers,
    }),
    passes: new Counter({
      name: 'archive_passes_total',
      help: 'Archive passes, by outcome (done, failed, storage_limit, disabled, interrupted, lease_lost, busy: not run while a restore or rekey held the archive)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    passDuration: new Histogram({
      name: 'archive_pass_duration_seconds',
      help: 'Duration of one archive pass',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    }),
    lastSuccess: new Gauge({
      name: 'archive_last_success_timestamp_seconds',
      help: 'Unix time of the last pass that reached the cutoff (0: none yet in this process)',
      registers,
    }),
    commands: new Counter({
      name: 'archive_commands_total',
      help: 'archive.rpc commands answered, by action and outcome',
      labelNames: ['action', 'outcome'] as const,
      registers,
    }),
    auditRowsDeleted: new Counter({
      name: 'archive_audit_rows_deleted_total',
      help: 'Audit rows deleted for being older than AUDIT_RETENTION_DAYS',
      registers,
    }),
    leaseHeld: new Gauge({
      name: 'archive_lease_held',
      help: '1 while this worker holds the archive lease',
      registers,
    }),
    status: [
      statusGauge('archive_enabled', '1 while archiving is enabled', (s) => (s.enabled ? 1 : 0)),
      statusGauge(
        'archive_last_error_present',
        '1 while the archive status shows a last_error (set by a failed or storage-limited pass, cleared by one that reaches the cutoff)',
        (s) => (s.last_error === null ? 0 : 1),
      ),
      statusGauge(
        'archive_watermark_timestamp_seconds',
        'Unix time of the newest archived item (0: nothing archived yet)',
        (s) => seconds(s.watermark),
      ),
      statusGauge(
        'archive_last_cleanup_timestamp_seconds',
        'Unix time the last pass of any worker reached the cutoff (0: none yet)',
        (s) => seconds(s.last_cleanup),
      ),
      statusGauge(
        'archive_storage_used_bytes',
        'Bytes the archive store holds',
        (s) => s.storage_used,
      ),
      statusGauge(
        'archive_storage_limit_bytes',
        'Bytes the archive may hold',
        (s) => s.storage_limit,
      ),
      statusGauge(
        'archive_pending_items',
        'Items older than the retention cutoff still in the content store',
        (s) => s.pending_count,
      ),
      statusGauge(
        'archive_media_files_pending',
        'Media files of the chunk in hand not uploaded yet',
        (s) => s.media_files_pending,
      ),
      statusGauge('archive_uploading', '1 while a pass uploads', (s) => (s.is_uploading ? 1 : 0)),
    ],
  };
  // Every outcome from 0, so increase() in the alerts sees a fresh process's first failure.
  const outcomes: Record<PassOutcome, 0> = {
    done: 0,
    disabled: 0,
    storage_limit: 0,
    failed: 0,
    interrupted: 0,
    lease_lost: 0,
    busy: 0,
  };
  for (const outcome of Object.keys(outcomes)) metrics.passes.inc({ outcome }, 0);
  return metrics;
}

export type ArchiveMetrics = ReturnType<typeof createArchiveMetrics>;

/**
 * The status for the gauges: one read serves every gauge of a scrape; a scrape waits for a read at most STATUS_WAIT_MS (a hung store must not make
 * the worker look down), and a read still running is reused rather than started again.
 */
function createStatusReader(read: () => Promise<ArchiveStatus>) {
  let last: ArchiveStatus | undefined;
  let ok = false;
  let readAt = 0;
  let running: { done: Promise<void>; waitUntil: number } | undefined;

  function current() {
    if (!running && Date.now() - readAt > STATUS_FRESH_MS) {
      const done = read()
        .then((status) => {
          last = status;
          ok = true;
        })
        .catch(() => {
          ok = false;
        })
        .finally(() => {
          readAt = Date.now();
          running = undefined;
        });
      // One deadline per read: the gauges of a scrape share it rather than wait in turn.
      running = { done, waitUntil: Date.now() + STATUS_WAIT_MS };
    }
    return running;
  }

  return {
    async latest(): Promise<ArchiveStatus | undefined> {
      const reading = current();
      if (reading) {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), Math.max(0, reading.waitUntil - Date.now()));
        });
        if ((await Promise.race([reading.done, timedOut])) === 'timeout') ok = false;
        clearTimeout(timer);
      }
      return last;
    },
    ok: () => ok,
  };
}

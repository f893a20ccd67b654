import { Counter, Gauge, Histogram, type Registry } from '@screenfleet/runtime';

/** Cumulative counters for this process; the state's counters are the archive's lifetime ones. */
export function createArchiveMetrics(registry: Registry) {
  const registers = [registry];
  return {
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
      help: 'Archive passes, by outcome (done, failed, storage_limit, disabled, interrupted, lease_lost)',
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
    leaseHeld: new Gauge({
      name: 'archive_lease_held',
      help: '1 while this worker holds the archive lease',
      registers,
    }),
  };
}

export type ArchiveMetrics = ReturnType<typeof createArchiveMetrics>;

import type { ArchiveState, ArchiveStatus } from '@screenfleet/contracts';

/**
 * GET /archive/status from the state. Counters are cumulative since the archive was created
 * (not per run): they survive restarts and match the Prometheus `_total` counters.
 */
export function toArchiveStatus(
  state: ArchiveState,
  live: { pendingCount: number; isUploading: boolean; mediaFilesPending: number },
): ArchiveStatus {
  return {
    enabled: state.settings.enabled,
    retention_days: state.settings.retention_days,
    watermark: state.watermark ? state.watermark.timestamp.toISOString() : null,
    last_cleanup: state.last_cleanup ? state.last_cleanup.toISOString() : null,
    last_error: state.last_error,
    storage_used: state.storage_used,
    storage_limit: state.settings.storage_limit,
    pending_count: live.pendingCount,
    is_uploading: live.isUploading,
    chunks_uploaded: state.counters.chunks_uploaded,
    media_files_uploaded: state.counters.media_files_uploaded,
    media_files_pending: live.mediaFilesPending,
  };
}

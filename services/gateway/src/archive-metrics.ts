import { Counter, Histogram, type Registry } from '@screenfleet/runtime';

/**
 * Archive worker calls; labels are bounded: action (status, configure, init, run, restore) and
 * result ('ok', the worker's refusal code, or why no valid answer came: timeout,
 * broker_unavailable, invalid_reply).
 */
export function createArchiveMetrics(registry: Registry) {
  const registers = [registry];
  return {
    calls: new Counter({
      name: 'gateway_archive_rpc_total',
      help: 'Archive worker calls by action and result (ok, a refusal code, or timeout, broker_unavailable, invalid_reply)',
      labelNames: ['action', 'result'] as const,
      registers,
    }),
    callDuration: new Histogram({
      name: 'gateway_archive_rpc_duration_seconds',
      help: 'Archive worker calls from request to reply (or to giving up), by action',
      labelNames: ['action'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 3, 10, 60, 120],
      registers,
    }),
  };
}

export type ArchiveMetrics = ReturnType<typeof createArchiveMetrics>;

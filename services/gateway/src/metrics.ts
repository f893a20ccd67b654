import { Counter, Gauge, Histogram, type Registry } from '@screenfleet/runtime';

type Registers = Registry[];

/**
 * Every gateway metric on the process's registry: HTTP requests and batches at the top, operator
 * commands under `operator`, archive worker calls under `archive`, searches under `search`. Labels are bounded (route
 * templates, status codes, reasons, actions), never devices.
 */
export function createGatewayMetrics(registry: Registry) {
  const registers = [registry];
  return {
    requests: new Counter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests by route, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      registers,
    }),
    requestDuration: new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'HTTP request duration by route, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    rejects: new Counter({
      name: 'gateway_rejects_total',
      help: 'Refused requests by reason',
      labelNames: ['reason'] as const,
      registers,
    }),
    itemsAccepted: new Counter({
      name: 'gateway_items_accepted_total',
      help: 'Content items accepted (confirmed by the broker)',
      registers,
    }),
    batchSize: new Histogram({
      name: 'gateway_batch_items',
      help: 'Items per accepted batch',
      buckets: [0, 1, 5, 10, 25, 50, 100, 250, 500, 1000],
      registers,
    }),
    publishDuration: new Histogram({
      name: 'gateway_publish_duration_seconds',
      help: 'Time from publish to broker confirm',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    }),
    operator: operatorMetrics(registers),
    archive: archiveMetrics(registers),
    search: searchMetrics(registers),
    devices: devicesMetrics(registers),
    tokens: tokensMetrics(registers),
    admin: adminMetrics(registers),
  };
}

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;
export type OperatorMetrics = GatewayMetrics['operator'];
export type ArchiveMetrics = GatewayMetrics['archive'];
export type SearchMetrics = GatewayMetrics['search'];
export type DevicesMetrics = GatewayMetrics['devices'];
export type TokensMetrics = GatewayMetrics['tokens'];
export type AdminMetrics = GatewayMetrics['admin'];

/** Operator commands; labels are bounded (action, result = 'success' or an error code). */
function operatorMetrics(registers: Registers) {
  // Read at scrape time, so an agent whose heartbeat expired is gone from the count even when
  // no request asked for the devices since.
  let connectedAgents: () => number = () => 0;
  const commands = new Counter({
    name: 'gateway_operator_commands_total',
    help: 'Operator commands by action (list, press, click, type) and result (success or error code)',
    labelNames: ['action', 'result'] as const,
    registers,
  });
  // Present from the start, so rate() and increase() see the first command of each action.
  for (const action of ['list', 'press', 'click', 'type'])
    commands.inc({ action, result: 'success' }, 0);
  return {
    commands,
    commandDuration: new Histogram({
      name: 'gateway_operator_command_duration_seconds',
      help: 'Operator commands from request to answer, by action (end to end through the agent)',
      labelNames: ['action'] as const,
      buckets: [0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    agentsConnected: new Gauge({
      name: 'gateway_operator_agents_connected',
      help: 'Operator agents whose presence heartbeat is current, as this gateway sees them',
      registers,
      collect() {
        this.set(connectedAgents());
      },
    }),
    /** Where agentsConnected reads the count from: the gateway's presence view. */
    countAgentsWith(count: () => number): void {
      connectedAgents = count;
    },
  };
}

/**
 * Archive worker calls; labels are bounded: action (status, configure, init, run, restore) and
 * result ('ok' or the error code the client saw: the worker's refusal mapped to its code, or
 * why no valid answer came: worker_unavailable, broker_unavailable, bad_gateway).
 */
function archiveMetrics(registers: Registers) {
  return {
    calls: new Counter({
      name: 'gateway_archive_rpc_total',
      help: 'Archive worker calls by action and result (ok, or the error code: conflict, validation_failed, store_unavailable, operation_failed, worker_unavailable, broker_unavailable, bad_gateway)',
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

/**
 * GET /search relayed to the ingest workers over search.rpc; result is bounded: 'ok' or the
 * error code the client saw (a refusal: store_unavailable, deadline_exceeded, validation_failed,
 * operation_failed; or no valid answer: worker_unavailable, broker_unavailable, bad_gateway).
 */
function searchMetrics(registers: Registers) {
  return {
    calls: new Counter({
      name: 'gateway_search_rpc_total',
      help: 'Searches asked of the ingest workers, by result (ok, or the error code: store_unavailable, deadline_exceeded, validation_failed, operation_failed, worker_unavailable, broker_unavailable, bad_gateway)',
      labelNames: ['result'] as const,
      registers,
    }),
    callDuration: new Histogram({
      name: 'gateway_search_rpc_duration_seconds',
      help: 'Searches from request to reply (or to giving up)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
  };
}

/** GET /devices, /devices/{name} and /health asking the ingest workers for the device counters. */
function devicesMetrics(registers: Registers) {
  return {
    calls: new Counter({
      name: 'gateway_devices_rpc_total',
      help: 'Device-counter reads asked of the ingest workers (GET /devices, /health), by result (ok, or the error code)',
      labelNames: ['result'] as const,
      registers,
    }),
    callDuration: new Histogram({
      name: 'gateway_devices_rpc_duration_seconds',
      help: 'Device-counter reads from request to reply (or to giving up)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
}

/**
 * The token cache (auth/token-cache.ts): what it holds and how fresh it is, read at scrape time,
 * and its snapshot loads by result ('ok', or the error code: worker_unavailable,
 * broker_unavailable, store_unavailable, bad_gateway). Alert on an age well past the 30 s
 * backstop: this gateway serves an old list (fail static).
 */
function tokensMetrics(registers: Registers) {
  let cache: { readonly storedSize: number; snapshotAgeMs(): number | undefined } = {
    storedSize: 0,
    snapshotAgeMs: () => undefined,
  };
  const snapshotLoads = new Counter({
    name: 'gateway_tokens_snapshot_loads_total',
    help: 'Loads of the stored tokens from the ingest workers, by result (ok or the error code)',
    labelNames: ['result'] as const,
    registers,
  });
  snapshotLoads.inc({ result: 'ok' }, 0);
  return {
    snapshotLoads,
    held: new Gauge({
      name: 'gateway_tokens_held',
      help: 'Stored tokens this gateway holds from its last snapshot (configured tokens not counted)',
      registers,
      collect() {
        this.set(cache.storedSize);
      },
    }),
    snapshotAge: new Gauge({
      name: 'gateway_tokens_snapshot_age_seconds',
      help: 'Seconds since this gateway last loaded the stored tokens; NaN before the first load (only configured tokens accepted)',
      registers,
      collect() {
        const ageMs = cache.snapshotAgeMs();
        this.set(ageMs === undefined ? NaN : ageMs / 1000);
      },
    }),
    /** The cache's observer (TokenCacheObserver). */
    snapshotLoaded(result: string): void {
      snapshotLoads.inc({ result });
    },
    /** Where the gauges read from: the gateway's token cache. */
    readFrom(source: typeof cache): void {
      cache = source;
    },
  };
}

/**
 * Token administration and the audit trail (ADR 0019): calls to the ingest workers over
 * tokens.rpc and search.rpc by action (create, list, revoke, create_code, list_codes,
 * revoke_code, enrol, audit) and result ('ok' or the error code the client saw), and audit
 * records the broker did not take (the answer to the client is unchanged: the count says so).
 */
function adminMetrics(registers: Registers) {
  return {
    calls: new Counter({
      name: 'gateway_admin_rpc_total',
      help: 'Token, enrolment and audit calls to the ingest workers, by action and result (ok, or the error code)',
      labelNames: ['action', 'result'] as const,
      registers,
    }),
    callDuration: new Histogram({
      name: 'gateway_admin_rpc_duration_seconds',
      help: 'Token, enrolment and audit calls from request to reply (or to giving up), by action',
      labelNames: ['action'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    auditPublishFailures: new Counter({
      name: 'gateway_audit_publish_failures_total',
      help: 'Audit records (operator commands, deletes, restores) the broker did not confirm: logged, the rows are missing',
      labelNames: ['action'] as const,
      registers,
    }),
  };
}

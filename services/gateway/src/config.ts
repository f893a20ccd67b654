import { defineConfig, serviceConfigSpec } from '@screenfleet/runtime';
import { MIN_OPERATOR_TIMEOUT_MS } from '@screenfleet/contracts';

export const gatewayConfigSpec = defineConfig({
  ...serviceConfigSpec('GATEWAY', 9464),
  connectionName: {
    env: 'GATEWAY_CONNECTION_NAME',
    kind: 'string',
    default: 'gateway',
    doc: 'Name this gateway shows the broker (rabbitmqctl list_connections), to tell gateways apart',
  },
  port: {
    env: 'GATEWAY_PORT',
    kind: 'integer',
    min: 0,
    max: 65535,
    default: 3030,
    doc: 'HTTP port of the API (screenpipe clients use 3030)',
  },
  host: {
    env: 'GATEWAY_HOST',
    kind: 'string',
    default: '127.0.0.1',
    doc: 'Address the API listens on; anything but loopback requires GATEWAY_TOKENS',
  },
  tokens: {
    env: 'GATEWAY_TOKENS',
    kind: 'string',
    optional: true,
    secret: true,
    doc: 'JSON list of tokens: [{"id","token","scopes":[...],"devices"?:[...]}]; none = one generated local token',
  },
  allowUnauthenticatedLoopback: {
    env: 'GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK',
    kind: 'boolean',
    default: false,
    doc: "Let requests without a token in, for screenpipe's unmodified local clients; loopback only",
  },
  healthAllowedHosts: {
    env: 'GATEWAY_HEALTH_ALLOWED_HOSTS',
    kind: 'list',
    default: [],
    doc: 'Comma-separated host names (no port) that GET /health without a token may be addressed to besides loopback ones, for a gateway reachable over the network on purpose (a load balancer or monitor polling it by name); any other Host is a 403 foreign_host (DNS rebinding). Requests with a valid token are not Host-checked; the loopback switch keeps to loopback Hosts',
  },
  dataDir: {
    env: 'DATA_DIR',
    kind: 'string',
    default: './data',
    doc: 'Where the generated local token is kept (created 0700; a start refuses one open to other users)',
  },
  publishTimeout: {
    env: 'GATEWAY_PUBLISH_TIMEOUT',
    kind: 'duration',
    default: 5000,
    doc: 'Longest wait for a broker confirm before answering 500 outcome_unknown (the broker may hold the batch); embedded mode: for the ingest worker to take the batch before answering 503 (nothing stored)',
  },
  outcomeTimeout: {
    env: 'GATEWAY_OUTCOME_TIMEOUT',
    kind: 'duration',
    default: 30000,
    doc: 'Embedded mode: once the ingest worker holds a batch, how much longer POST /add waits for its commit before answering 500 outcome_unknown (re-sending is safe: nothing is stored twice)',
  },
  operatorSigningKey: {
    env: 'GATEWAY_OPERATOR_SIGNING_KEY',
    kind: 'string',
    optional: true,
    doc: 'Ed25519 private key (PEM, or the path of a PEM file) signing operator commands; agents refuse unsigned ones, so without it the operator endpoints cannot press',
  },
  operatorTimeout: {
    env: 'GATEWAY_OPERATOR_TIMEOUT',
    kind: 'duration',
    min: MIN_OPERATOR_TIMEOUT_MS,
    default: 5000,
    doc: 'Longest wait for an operator agent to answer a command (504 after); split into the queue expiry, the agent budget and a grace (operator-agent README, never late)',
  },
  archiveTimeout: {
    env: 'GATEWAY_ARCHIVE_TIMEOUT',
    kind: 'duration',
    default: 3000,
    doc: 'Longest wait for the archive worker to answer status, configure, init or run (503 after); the request expires with it',
  },
  searchTimeout: {
    env: 'GATEWAY_SEARCH_TIMEOUT',
    kind: 'duration',
    default: 10000,
    doc: 'Longest wait for GET /search (503 after): a fifth for a worker to take it (else it expires unrun), a tenth (at least 200 ms, at most 1 s) for the answer to come back, and the store stops the search when the rest has passed (503 deadline_exceeded; searchTimings)',
  },
  captureStallAfter: {
    env: 'CAPTURE_STALL_AFTER',
    kind: 'duration',
    default: 300000,
    doc: 'A device that was sending and has sent nothing for this long is `stalled` in GET /devices (and its frames/audio `stale` in GET /health)',
  },
  archiveRestoreTimeout: {
    env: 'GATEWAY_ARCHIVE_RESTORE_TIMEOUT',
    kind: 'duration',
    default: 120000,
    doc: 'Longest wait for the archive worker to finish POST /archive/restore, /data/delete-range or /data/delete-device (503 after; each is idempotent, so a retry is safe and finishes what is left)',
  },
});

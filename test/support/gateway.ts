import { generateKeyPairSync } from 'node:crypto';
import { topology } from '@screenfleet/contracts';
import { createAmqpBus, type Bus } from '@screenfleet/bus';
import {
  createGateway,
  createGatewayMetrics,
  createRateLimits,
  createTokenRegistry,
  type RateRule,
  type RouteClass,
  type TokenEntry,
} from '@screenfleet/gateway';
import { createLogger, createMetrics, type Logger, type Registry } from '@screenfleet/runtime';
import { uniqueName } from '../services';

export const tokens = {
  all: {
    id: 'test-all',
    token: 'test-token-all-scopes-0001',
    scopes: [
      'ingest',
      'search',
      'operator',
      'archive:read',
      'archive:write',
      'data:delete',
      'metrics',
    ],
  },
  ingestDesk1: {
    id: 'test-desk1',
    token: 'test-token-ingest-desk-1-01',
    scopes: ['ingest'],
    devices: ['desk-1'],
  },
  operatorOnly: { id: 'test-operator', token: 'test-token-operator-only-01', scopes: ['operator'] },
  searchDesk1: {
    id: 'test-search-desk1',
    token: 'test-token-search-desk-1-01',
    scopes: ['search'],
    devices: ['desk-1'],
  },
  deleteDesk1: {
    id: 'test-delete-desk1',
    token: 'test-token-delete-desk-1-01',
    scopes: ['data:delete', 'ingest'],
    devices: ['desk-1'],
  },
  archiveReader: {
    id: 'test-archive-reader',
    token: 'test-token-archive-read-only-01',
    scopes: ['archive:read'],
  },
  admin: {
    id: 'test-admin',
    token: 'test-token-admin-tokens-audit-01',
    scopes: ['tokens:admin', 'audit:read'],
  },
} satisfies Record<string, TokenEntry>;

/** The test gateways' command signing key pair: give agents the public key. */
export const operatorKeys = generateKeyPairSync('ed25519');
/** The public key as agent processes take it (OPERATOR_COMMAND_PUBLIC_KEY). */
export const operatorPublicKeyPem = operatorKeys.publicKey
  .export({ type: 'spki', format: 'pem' })
  .toString();

export interface RunningGateway {
  url: string;
  bus: Bus;
  registry: Registry;
  connectionName: string;
  close(): Promise<void>;
}

/** The gateway built as main.ts builds it, in this process, on a free loopback port. */
export async function startGateway(
  brokerUrl: string,
  options: {
    publishTimeoutMs?: number;
    reconnectMs?: number;
    allowUnauthenticatedLoopback?: boolean;
    archiveTimeoutMs?: number;
    archiveRestoreTimeoutMs?: number;
    operatorTimeoutMs?: number;
    /** Rate limits by class; none when absent, so that suites sending many requests are not throttled. */
    rateLimits?: Partial<Record<RouteClass, RateRule>>;
    /** Tokens beside `tokens` (a suite's own scopes or device bindings). */
    extraTokens?: readonly TokenEntry[];
    /** A logger whose lines the test reads; silent when absent. */
    logger?: Logger;
  } = {},
): Promise<RunningGateway> {
  const connectionName = uniqueName('gateway');
  const logger = options.logger ?? createLogger({ service: 'gateway', level: 'silent' });
  const bus = await createAmqpBus({
    url: brokerUrl,
    topology,
    connectionName,
    logger,
    reconnect: {
      initialMs: options.reconnectMs ?? 50,
      maxMs: Math.max(1000, options.reconnectMs ?? 0),
    },
    publishTimeoutMs: options.publishTimeoutMs ?? 5000,
  });
  const registry = createMetrics();
  const gateway = createGateway({
    bus,
    auth: {
      tokens: createTokenRegistry([...Object.values(tokens), ...(options.extraTokens ?? [])]),
      allowUnauthenticatedLoopback: options.allowUnauthenticatedLoopback ?? false,
      ...(options.rateLimits ? { rateLimits: createRateLimits(options.rateLimits) } : {}),
    },
    metrics: createGatewayMetrics(registry),
    logger,
    archive: {
      timeoutMs: options.archiveTimeoutMs,
      restoreTimeoutMs: options.archiveRestoreTimeoutMs,
    },
    operator: {
      signingKey: operatorKeys.privateKey,
      ...(options.operatorTimeoutMs ? { timeoutMs: options.operatorTimeoutMs } : {}),
    },
  });
  const port = await gateway.listen(0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    bus,
    registry,
    connectionName,
    async close() {
      await gateway.close();
      await bus.close();
    },
  };
}

/** GET with a bearer token (`null` sends none): the status, headers and JSON body. */
export async function get<T = Record<string, unknown>>(
  url: string,
  token: string | null = tokens.all.token,
  headers: Record<string, string> = {},
  init: { signal?: AbortSignal } = {},
) {
  const response = await fetch(url, {
    ...init,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...headers },
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as T };
}

export async function post(
  url: string,
  body: unknown,
  token: string = tokens.all.token,
  headers: Record<string, string> = {},
  init: { signal?: AbortSignal } = {},
) {
  const response = await fetch(url, {
    ...init,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>,
  };
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { Logger } from './logger';

export interface Readiness {
  ready: boolean;
  /** One entry per dependency, e.g. `{ broker: 'down: connection closed', store: 'up' }`. */
  checks: Record<string, string>;
}

export interface OpsServerOptions {
  /** 0 picks a free port; the actual one is returned. */
  port: number;
  /** Binding address; `0.0.0.0` to let a Prometheus on another host scrape. */
  host: string;
  registry: Registry;
  /** Asked on every GET /readyz; always ready when absent. */
  readiness?: () => Promise<Readiness> | Readiness;
  /** A check that hangs must not hang the probe: after this it counts as not ready. */
  readinessTimeoutMs?: number;
  /** When set, GET /metrics requires `Authorization: Bearer <token>` (probes stay open). */
  metricsToken?: string;
  logger: Logger;
}

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/** Serves /metrics, /healthz and /readyz on their own port, apart from the service's API. */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const logger = options.logger.child({ component: 'ops-server' });
  const server = createServer((req, res) => {
    handle(options, req, res).catch((err: unknown) => {
      logger.error({ err, url: req.url }, 'ops request failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  logger.info({ host: options.host, port }, 'ops server listening');

  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Probes and scrapes are short: cutting kept-alive sockets lets shutdown finish now.
        server.closeAllConnections();
      }),
  };
}

const ROUTES = ['/metrics', '/healthz', '/readyz'];

async function handle(
  options: OpsServerOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (!ROUTES.includes(path)) return sendJson(res, 404, { error: `not found: ${path}` });
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return sendJson(res, 405, { error: `method not allowed: ${req.method ?? ''}` });
  }
  switch (path) {
    case '/healthz':
      return sendJson(res, 200, { status: 'ok' });
    case '/readyz': {
      const readiness = await checkReadiness(options);
      return sendJson(res, readiness.ready ? 200 : 503, readiness);
    }
    default: {
      if (options.metricsToken !== undefined && !hasBearer(req, options.metricsToken)) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        return sendJson(res, 401, { error: 'metrics need a bearer token' });
      }
      const text = await options.registry.metrics();
      res.writeHead(200, { 'Content-Type': options.registry.contentType });
      res.end(text);
    }
  }
}

async function checkReadiness(options: OpsServerOptions): Promise<Readiness> {
  if (!options.readiness) return { ready: true, checks: {} };
  const timeoutMs = options.readinessTimeoutMs ?? 2000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Readiness>((resolve) => {
    timer = setTimeout(
      () => resolve({ ready: false, checks: { readiness: `timeout after ${timeoutMs} ms` } }),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([Promise.resolve(options.readiness()), timeout]);
  } catch (err) {
    return { ready: false, checks: { readiness: `error: ${errorMessage(err)}` } };
  } finally {
    clearTimeout(timer);
  }
}

function hasBearer(req: IncomingMessage, token: string): boolean {
  const given = Buffer.from(req.headers.authorization ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
  });
  res.end(JSON.stringify(body));
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

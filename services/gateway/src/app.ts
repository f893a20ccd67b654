import type { KeyObject } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { limits } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';
import { gatewayConfigSpec } from './config';
import type { GatewayMetrics } from './metrics';
import { createAuditTrail } from './domain/audit-trail';
import type { OperatorPresenceTracker } from './domain/operator-presence';
import type { AuthOptions } from './entry/authenticate';
import { addRoutes } from './entry/add.routes';
import { archiveRouteMethods, archiveRoutes } from './entry/archive.routes';
import { auditPath, auditRoutes } from './entry/audit.routes';
import {
  consoleAssetsPrefix,
  consoleAssetsRoute,
  consolePath,
  consoleRoutes,
} from './entry/console.routes';
import { dataRouteMethods, dataRoutes } from './entry/data.routes';
import { deviceRouteLabel, devicesPath, devicesRoutes } from './entry/devices.routes';
import { docsRoutePaths, docsRoutes } from './entry/docs.routes';
import { healthPath, healthRoutes } from './entry/health.routes';
import { HttpError } from './entry/http-error';
import { toHttpFailure } from './entry/http-errors';
import { toBodyError } from './entry/json-body';
import { openApiPath, openApiRoutes } from './entry/openapi.routes';
import { operatorPaths, operatorRoutes } from './entry/operator.routes';
import { searchPath, searchRoutes } from './entry/search.routes';
import { tokenRouteMethods, tokenRouteOf, tokensRoutes } from './entry/tokens.routes';
import { whoAmIPath, whoAmIRoutes } from './entry/whoami.routes';

export interface GatewayDeps {
  bus: Bus;
  auth: AuthOptions;
  metrics: GatewayMetrics;
  logger: Logger;
  operator?: {
    /** How long a command may wait for its agent (504 after); default GATEWAY_OPERATOR_TIMEOUT's. */
    timeoutMs?: number;
    /** Signs every command (Ed25519); agents run nothing unsigned. */
    signingKey?: KeyObject;
  };
  search?: {
    /** How long GET /search waits for an ingest worker (503 after); default GATEWAY_SEARCH_TIMEOUT's. */
    timeoutMs?: number;
  };
  devices?: {
    /** CAPTURE_STALL_AFTER: default its config default. */
    stallAfterMs?: number;
    /** How long GET /health waits for an ingest worker (default 2 s). */
    healthTimeoutMs?: number;
    /** GATEWAY_HEALTH_ALLOWED_HOSTS, as parseAllowedHosts gives them (default none). */
    healthAllowedHosts?: readonly string[];
    /** How long a /health summary is served before it is read again (default 1 s). */
    healthMaxAgeMs?: number;
  };
  archive?: {
    /** How long status, configure, init and run wait for the worker (503 after). */
    timeoutMs?: number;
    /** How long a restore may take before the client gets a 503 (it goes on, idempotently). */
    restoreTimeoutMs?: number;
  };
}

declare module 'express-serve-static-core' {
  interface Locals {
    requestId: string;
  }
}

/** Routes and the methods they accept, for 405 answers with an Allow header. */
const routes: Record<string, string[]> = {
  '/add': ['POST'],
  [searchPath]: ['GET'],
  [devicesPath]: ['GET'],
  [deviceRouteLabel]: ['GET'],
  [healthPath]: ['GET'],
  [operatorPaths.list]: ['POST'],
  [operatorPaths.press]: ['POST'],
  [operatorPaths.click]: ['POST'],
  [operatorPaths.type]: ['POST'],
  ...archiveRouteMethods,
  ...dataRouteMethods,
  ...tokenRouteMethods,
  [auditPath]: ['GET'],
  [openApiPath]: ['GET'],
  ...Object.fromEntries(docsRoutePaths.map((path) => [path, ['GET']])),
  [consolePath]: ['GET'],
  [whoAmIPath]: ['GET'],
};

export function createGatewayApp(
  deps: GatewayDeps,
  presence: OperatorPresenceTracker,
): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestContext(deps));
  app.use(methodGuard);
  // The API's description, without a token (entry/openapi.routes.ts says why).
  app.use(openApiRoutes());
  // Its reference page for people, also without a token (entry/docs.routes.ts says why).
  app.use(docsRoutes());
  // The console: static files calling this same API with the user's token (console.routes.ts).
  app.use(consoleRoutes());
  app.use(whoAmIRoutes(deps.auth));
  // Operator commands, deletes and restores leave audit rows (ADR 0019), published on the side.
  const trail = createAuditTrail({
    bus: deps.bus,
    logger: deps.logger,
    observer: {
      publishFailed: (action) => deps.metrics.admin.auditPublishFailures.inc({ action }),
    },
  });
  const stallAfterMs = deps.devices?.stallAfterMs ?? gatewayConfigSpec.captureStallAfter.default;
  // screenpipe's clients poll it without a token (health.routes.ts says what it shows).
  app.use(
    healthRoutes({
      bus: deps.bus,
      auth: deps.auth,
      metrics: deps.metrics.devices,
      stallAfterMs,
      allowedHosts: deps.devices?.healthAllowedHosts ?? [],
      ...(deps.devices?.healthMaxAgeMs ? { maxAgeMs: deps.devices.healthMaxAgeMs } : {}),
      ...(deps.devices?.healthTimeoutMs ? { timeoutMs: deps.devices.healthTimeoutMs } : {}),
    }),
  );
  app.use(
    devicesRoutes({
      bus: deps.bus,
      auth: deps.auth,
      presence,
      metrics: deps.metrics.devices,
      timeoutMs: deps.search?.timeoutMs ?? gatewayConfigSpec.searchTimeout.default,
      stallAfterMs,
    }),
  );
  // Each route authenticates before it reads its body (entry/json-body.ts): no unauthenticated
  // request is buffered or parsed, and bodiless requests (GET) never meet the JSON check.
  app.use(addRoutes(deps));
  app.use(
    searchRoutes({
      bus: deps.bus,
      auth: deps.auth,
      metrics: deps.metrics.search,
      timeoutMs: deps.search?.timeoutMs ?? gatewayConfigSpec.searchTimeout.default,
    }),
  );
  app.use(
    operatorRoutes({
      bus: deps.bus,
      auth: deps.auth,
      presence,
      metrics: deps.metrics.operator,
      logger: deps.logger,
      timeoutMs: deps.operator?.timeoutMs ?? gatewayConfigSpec.operatorTimeout.default,
      signingKey: deps.operator?.signingKey,
      trail,
    }),
  );
  app.use(
    archiveRoutes({
      bus: deps.bus,
      auth: deps.auth,
      metrics: deps.metrics.archive,
      timeoutMs: deps.archive?.timeoutMs ?? gatewayConfigSpec.archiveTimeout.default,
      restoreTimeoutMs:
        deps.archive?.restoreTimeoutMs ?? gatewayConfigSpec.archiveRestoreTimeout.default,
      trail,
    }),
  );
  app.use(
    dataRoutes({
      bus: deps.bus,
      auth: deps.auth,
      metrics: deps.metrics.archive,
      logger: deps.logger,
      // As long as a restore: a device's whole history may be a lot to delete.
      timeoutMs: deps.archive?.restoreTimeoutMs ?? gatewayConfigSpec.archiveRestoreTimeout.default,
      trail,
    }),
  );
  // Kept by the ingest workers' store, asked as a search is (ADR 0019).
  const adminCall = {
    bus: deps.bus,
    auth: deps.auth,
    metrics: deps.metrics.admin,
    timeoutMs: deps.search?.timeoutMs ?? gatewayConfigSpec.searchTimeout.default,
  };
  app.use(tokensRoutes(adminCall));
  app.use(auditRoutes(adminCall));
  app.use((req) => {
    throw new HttpError(404, 'not_found', `no route ${req.method} ${req.path}`);
  });
  app.use(errorHandler(deps));
  return app;
}

/** A client's X-Request-Id, kept when it can travel as a message's correlation id. */
const requestIdPattern = new RegExp(`^[\\w.:-]{1,${limits.maxMessageIdLength}}$`);

function requestContext({ metrics }: GatewayDeps): RequestHandler {
  return (req, res, next) => {
    const given = req.get('x-request-id');
    res.locals.requestId = given && requestIdPattern.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', res.locals.requestId);
    const stop = metrics.requestDuration.startTimer();
    res.once('finish', () => {
      const path = routeOf(req.path);
      const labels = {
        route: routes[path]
          ? path
          : req.path.startsWith(consoleAssetsPrefix)
            ? consoleAssetsRoute
            : 'unmatched',
        method: req.method,
        status: String(res.statusCode),
      };
      stop(labels);
      metrics.requests.inc(labels);
    });
    next();
  };
}

/** The route a path belongs to: itself, or its pattern (GET /devices/{name}, /tokens/{id}). */
function routeOf(path: string): string {
  if (path.startsWith(`${devicesPath}/`)) return deviceRouteLabel;
  return tokenRouteOf(path) ?? path;
}

const methodGuard: RequestHandler = (req, _res, next) => {
  const allowed = routes[routeOf(req.path)];
  if (allowed && !allowed.includes(req.method)) {
    throw new HttpError(
      405,
      'method_not_allowed',
      `${req.method} is not allowed on ${req.path}`,
      [],
      {
        Allow: allowed.join(', '),
      },
    );
  }
  next();
};

function errorHandler({ logger, metrics }: GatewayDeps): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const failure = toHttpFailure(toBodyError(error) ?? error);
    metrics.rejects.inc({ reason: failure.reason });
    const log = {
      requestId: res.locals.requestId,
      method: req.method,
      path: req.path,
      status: failure.status,
    };
    if (failure.status >= 500) logger.error({ ...log, err: error }, failure.body.message);
    else logger.info({ ...log, reason: failure.reason }, failure.body.message);
    if (res.headersSent) return;
    res.status(failure.status).set(failure.headers).json(failure.body);
  };
}

import type { KeyObject } from 'node:crypto';
import {
  Router,
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { limits, validators } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';
import {
  listingOf,
  operationResultOf,
  sendOperatorCommand,
  toListCommand,
  toPressCommand,
} from '../operator-commands';
import { ListingDevices } from '../listing-devices';
import type { OperatorMetrics } from '../operator-metrics';
import type { OperatorPresenceTracker } from '../operator-presence';
import { assertDeviceAllowed, requireScope, type AuthOptions } from './authenticate';
import { toHttpFailure } from './http-errors';
import { jsonBody, toBodyError } from './json-body';

export const operatorPaths = {
  list: '/experimental/operator/list-interactable-elements',
  press: '/experimental/operator/press-key-by-index',
} as const;

export interface OperatorRoutesDeps {
  bus: Pick<Bus, 'sendToDevice'>;
  auth: AuthOptions;
  presence: OperatorPresenceTracker;
  metrics: OperatorMetrics;
  logger: Logger;
  timeoutMs: number;
  /** Signs every command; without it agents refuse them (unsigned). */
  signingKey?: KeyObject | undefined;
}

type Action = 'list' | 'press';
type Audit = Record<string, unknown>;

const actionByPath: Record<string, Action | undefined> = {
  [operatorPaths.list]: 'list',
  [operatorPaths.press]: 'press',
};

const asError = (error: unknown): Error =>
  error instanceof Error ? error : new Error(String(error));

/** Runs an Express middleware (requireScope) as a step: resolves on next(), rejects on a throw. */
function runMiddleware(handler: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    try {
      void handler(req, res, (error?: unknown) =>
        error === undefined ? resolve() : reject(asError(error)),
      );
    } catch (error) {
      reject(asError(error));
    }
  });
}

/**
 * Remote input into someone's desktop: every command attempt, refused or not, leaves one audit
 * line (who, which device, which element and key, the status, how long) and is counted. The
 * wrapper is the outermost handler of each operator route, so authentication (401/403), then body
 * parsing and validation (400/413/415) run inside it; failures raised before the routes on their
 * paths (a wrong method) are audited by `auditEarlyFailures`, with tokenId null.
 */
function createAudit(deps: OperatorRoutesDeps) {
  const logger = deps.logger.child({ component: 'operator-audit' });
  const seen = new WeakSet<Request>();
  const scope = requireScope('operator', deps.auth);
  const parseBody = jsonBody(limits.maxBodyBytes);

  const record = (
    res: Response,
    action: Action,
    audit: Audit,
    failure: unknown,
    seconds?: number,
  ): void => {
    const { status, reason } =
      failure === undefined
        ? { status: 200, reason: 'success' }
        : toHttpFailure(toBodyError(failure) ?? failure);
    deps.metrics.commands.inc({ action, result: reason });
    logger.info(
      {
        audit: 'operator',
        requestId: res.locals.requestId,
        action,
        ...audit,
        status,
        result: reason,
        durationMs: seconds === undefined ? undefined : Math.round(seconds * 10_000) / 10,
      },
      'operator command',
    );
  };

  const audited =
    (action: Action, run: (req: Request, res: Response, audit: Audit) => Promise<void>) =>
    async (req: Request, res: Response): Promise<void> => {
      seen.add(req);
      const stop = deps.metrics.commandDuration.startTimer({ action });
      const audit: Audit = { tokenId: null };
      let failure: unknown;
      try {
        await runMiddleware(scope, req, res);
        audit.tokenId = res.locals.grant.id;
        for (const step of parseBody) await runMiddleware(step, req, res);
        await run(req, res, audit);
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        record(res, action, audit, failure, stop());
      }
    };

  const auditEarlyFailures: ErrorRequestHandler = (error: unknown, req, res, next) => {
    const action = actionByPath[req.path];
    if (action && !seen.has(req)) record(res, action, { tokenId: null }, error);
    next(error);
  };

  return { audited, auditEarlyFailures };
}

/**
 * The operator routes, then an error handler that audits what failed on their paths before
 * they ran: mount both, in this order (`app.use(operatorRoutes(deps))`).
 */
export function operatorRoutes(deps: OperatorRoutesDeps): [Router, ErrorRequestHandler] {
  const router = Router();
  const { audited, auditEarlyFailures } = createAudit(deps);
  const options = (res: Response) => ({
    timeoutMs: deps.timeoutMs,
    requestId: res.locals.requestId,
    signingKey: deps.signingKey,
  });
  const listings = new ListingDevices();
  /**
   * A bound token sees (and may default to) only its own devices. A press that names no device
   * goes where its listing was made (resolved once, at listing time), when this gateway saw it.
   */
  const deviceFor = (
    res: Response,
    deviceName: string | undefined,
    listing?: { cacheId: string | undefined },
  ): string => {
    const listed = listing && listings.deviceFor(res.locals.grant.id, listing.cacheId);
    const device =
      deviceName ??
      listed ??
      deps.presence.resolve(deviceName, { allowed: res.locals.grant.devices });
    assertDeviceAllowed(res.locals.grant, device);
    return device;
  };

  router.post(
    operatorPaths.list,
    audited('list', async (req, res, audit) => {
      const request = validators.listElementsRequest.parse(req.body);
      audit.appName = request.app_name;
      audit.device = request.device_name;
      const device = deviceFor(res, request.device_name);
      audit.device = device;
      const command = toListCommand(request, deps.timeoutMs, res.locals.grant.id);
      const result = await sendOperatorCommand(deps.bus, device, command, options(res));
      const listing = listingOf(result);
      const { cache_id: cacheId, ttl_seconds: ttl } = listing.cache_info;
      listings.remember(res.locals.grant.id, cacheId, device, ttl * 1000);
      audit.elements = listing.cache_info.element_count;
      audit.cacheId = listing.cache_info.cache_id;
      res.json(listing);
    }),
  );

  router.post(
    operatorPaths.press,
    audited('press', async (req, res, audit) => {
      const request = validators.pressKeyRequest.parse(req.body);
      const command = toPressCommand(request, deps.timeoutMs, res.locals.grant.id);
      Object.assign(audit, {
        elementIndex: command.element_index,
        cacheId: command.cache_id,
        key: command.key,
        modifiers: command.modifiers,
        device: request.device_name,
      });
      const device = deviceFor(res, request.device_name, { cacheId: command.cache_id });
      audit.device = device;
      const result = await sendOperatorCommand(deps.bus, device, command, options(res));
      res.json(operationResultOf(result));
    }),
  );
  return [router, auditEarlyFailures];
}

import { Router, type Request, type Response } from 'express';
import { validators } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';
import {
  listingOf,
  operationResultOf,
  sendOperatorCommand,
  toKeyCombo,
  toListCommand,
} from '../operator-commands';
import type { OperatorMetrics } from '../operator-metrics';
import type { OperatorPresenceTracker } from '../operator-presence';
import { assertDeviceAllowed, requireScope, type AuthOptions } from './authenticate';
import { toHttpFailure } from './http-errors';

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
}

type Action = 'list' | 'press';

/**
 * Remote input into someone's desktop: every command, refused or not, leaves one audit line
 * (who, which device, which element and key, the outcome, how long) and is counted.
 */
function audited(
  deps: OperatorRoutesDeps,
  action: Action,
  run: (req: Request, res: Response, audit: Record<string, unknown>) => Promise<void>,
) {
  const logger = deps.logger.child({ component: 'operator-audit' });
  return async (req: Request, res: Response): Promise<void> => {
    const stop = deps.metrics.commandDuration.startTimer({ action });
    const audit: Record<string, unknown> = { tokenId: res.locals.grant.id };
    let failure: unknown;
    try {
      await run(req, res, audit);
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      const seconds = stop();
      const { status, reason } =
        failure === undefined ? { status: 200, reason: 'success' } : toHttpFailure(failure);
      deps.metrics.commands.inc({ action, result: reason });
      logger.info(
        {
          audit: 'operator',
          requestId: res.locals.requestId,
          action,
          ...audit,
          status,
          result: reason,
          durationMs: Math.round(seconds * 10_000) / 10,
        },
        'operator command',
      );
    }
  };
}

export function operatorRoutes(deps: OperatorRoutesDeps): Router {
  const router = Router();
  const scope = requireScope('operator', deps.auth);
  const options = (res: Response) => ({
    timeoutMs: deps.timeoutMs,
    requestId: res.locals.requestId,
  });

  router.post(
    operatorPaths.list,
    scope,
    audited(deps, 'list', async (req, res, audit) => {
      const request = validators.listElementsRequest.parse(req.body);
      audit.appName = request.app_name;
      const device = deps.presence.resolve(request.device_name);
      audit.device = device;
      assertDeviceAllowed(res.locals.grant, device);
      const command = toListCommand(request, deps.timeoutMs);
      const result = await sendOperatorCommand(deps.bus, device, command, options(res));
      const listing = listingOf(result);
      audit.elements = listing.cache_info.element_count;
      res.json(listing);
    }),
  );

  router.post(
    operatorPaths.press,
    scope,
    audited(deps, 'press', async (req, res, audit) => {
      const request = validators.pressKeyRequest.parse(req.body);
      audit.elementIndex = request.element_index;
      const { key, modifiers } = toKeyCombo(request);
      Object.assign(audit, { key, modifiers });
      const device = deps.presence.resolve(request.device_name);
      audit.device = device;
      assertDeviceAllowed(res.locals.grant, device);
      const command = {
        action: 'press' as const,
        timeout_ms: deps.timeoutMs,
        element_index: request.element_index,
        key,
        modifiers,
      };
      const result = await sendOperatorCommand(deps.bus, device, command, options(res));
      res.json(operationResultOf(result));
    }),
  );
  return router;
}

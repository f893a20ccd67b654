import { Router } from 'express';
import { addRoute, limits, validators } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { addContent } from '../domain/add-content';
import type { GatewayMetrics } from '../metrics';
import { assertDeviceAllowed, requireScope, type AuthOptions } from './authenticate';
import { jsonBody } from './json-body';

export function addRoutes(deps: { bus: Bus; auth: AuthOptions; metrics: GatewayMetrics }): Router {
  const router = Router();
  router.post(
    addRoute.path,
    requireScope('ingest', deps.auth),
    ...jsonBody(limits.maxBodyBytes),
    async (req, res) => {
      const receivedAt = new Date();
      const request = validators.addRequest.parse(req.body);
      assertDeviceAllowed(res.locals.grant, request.device_name);

      const publishTimer = deps.metrics.publishDuration.startTimer();
      const accepted = await addContent(deps.bus, request, {
        receivedAt,
        requestId: res.locals.requestId,
      });
      publishTimer();

      deps.metrics.itemsAccepted.inc(accepted.items);
      deps.metrics.batchSize.observe(accepted.items);
      res.json(accepted.result);
    },
  );
  return router;
}

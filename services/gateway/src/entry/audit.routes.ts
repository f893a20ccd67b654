import { Router } from 'express';
import { auditPath, parseAuditQuery } from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { readAudit } from '../domain/audit-commands';
import { countedCall } from '../domain/worker-call';
import type { AdminMetrics } from '../metrics';
import { requireScope, type AuthOptions } from './authenticate';

export { auditPath };

export interface AuditRoutesDeps {
  bus: Pick<Bus, 'call'>;
  auth: AuthOptions;
  metrics: AdminMetrics;
  timeoutMs: number;
}

/**
 * GET /audit (scope audit:read): the audit trail the ingest workers keep, newest first, paged
 * by cursor. audit:read is an administrator's scope: the filters are what is asked, whatever
 * devices the token is bound to.
 */
export function auditRoutes(deps: AuditRoutesDeps): Router {
  const router = Router();
  router.get(auditPath, requireScope('audit:read', deps.auth), async (req, res) => {
    const request = parseAuditQuery(req.query);
    const page = await countedCall(deps.metrics, { action: 'audit' }, () =>
      readAudit(deps.bus, request, { timeoutMs: deps.timeoutMs, requestId: res.locals.requestId }),
    );
    res.set('Cache-Control', 'no-store').json(page);
  });
  return router;
}

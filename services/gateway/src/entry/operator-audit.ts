import type { ErrorRequestHandler, Request, Response } from 'express';
import type { Logger } from '@screenfleet/runtime';
import type { OperatorMetrics } from '../metrics';
import { toHttpFailure } from './http-errors';
import { toBodyError } from './json-body';

export type OperatorAction = 'list' | 'press' | 'click' | 'type';

/** What the handler learned about the command so far: who, which device, element, key ... */
export type AuditEntry = Record<string, unknown> & { tokenId: string | null };

export type AuditedHandler = (req: Request, res: Response, entry: AuditEntry) => Promise<void>;

/**
 * Remote input into someone's desktop: every command attempt, refused or not, leaves one audit
 * line (who, which device, which element and key, the status, how long) and is counted.
 * `audited` wraps a whole operator route handler, which authenticates (401/403) and reads its
 * body (400/413/415) itself, so every refusal passes through it. `earlyFailures` audits what
 * failed on the operator paths before their routes ran (a wrong method: 405), with tokenId
 * null: mounted before the routes, it never sees their errors.
 */
export function createOperatorAudit(deps: {
  logger: Logger;
  metrics: OperatorMetrics;
  /** The operator paths and their actions. */
  paths: ReadonlyMap<string, OperatorAction>;
}) {
  const logger = deps.logger.child({ component: 'operator-audit' });

  const record = (
    res: Response,
    action: OperatorAction,
    entry: AuditEntry,
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
        ...entry,
        status,
        result: reason,
        durationMs: seconds === undefined ? undefined : Math.round(seconds * 10_000) / 10,
      },
      'operator command',
    );
  };

  const audited =
    (action: OperatorAction, handler: AuditedHandler) =>
    async (req: Request, res: Response): Promise<void> => {
      const stop = deps.metrics.commandDuration.startTimer({ action });
      const entry: AuditEntry = { tokenId: null };
      let failure: unknown;
      try {
        await handler(req, res, entry);
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        record(res, action, entry, failure, stop());
      }
    };

  const earlyFailures: ErrorRequestHandler = (error: unknown, req, res, next) => {
    const action = deps.paths.get(req.path);
    if (action) record(res, action, { tokenId: null }, error);
    next(error);
  };

  return { audited, earlyFailures };
}

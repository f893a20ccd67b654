import { Router, type Response } from 'express';
import {
  archiveConfigureRoute,
  archiveInitRoute,
  archiveRestoreRoute,
  archiveRunRoute,
  archiveStatusRoute,
  limits,
  validators,
  type ArchiveActionResult,
  type ArchiveCommand,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { sendArchiveCommand, type ArchiveAnswer } from '../domain/archive-commands';
import type { AuditTrail } from '../domain/audit-trail';
import { countedCall } from '../domain/worker-call';
import type { ArchiveMetrics } from '../metrics';
import { authenticate, requireScope, type AuthOptions } from './authenticate';
import { answeredWith } from './http-errors';
import { jsonBody, jsonBodyReader } from './json-body';

export const archivePaths = {
  status: archiveStatusRoute.path,
  configure: archiveConfigureRoute.path,
  init: archiveInitRoute.path,
  run: archiveRunRoute.path,
  restore: archiveRestoreRoute.path,
} as const;

export interface ArchiveRoutesDeps {
  bus: Pick<Bus, 'call'>;
  auth: AuthOptions;
  metrics: ArchiveMetrics;
  /** Status, configure, init and run. */
  timeoutMs: number;
  /** Restore reads objects back and re-inserts items: it may take minutes. */
  restoreTimeoutMs: number;
  /** Where restore attempts become audit rows (ADR 0019). */
  trail?: AuditTrail | undefined;
}

const messages: Record<Exclude<ArchiveCommand['action'], 'status' | 'delete'>, string> = {
  configure: 'archive configuration updated',
  init: 'archive initialised',
  run: 'archive run started',
  restore: 'archive restore finished',
};

/**
 * The archive API, relayed to the archive worker over `archive.rpc`. GET /archive/status takes
 * no body (a JSON Content-Type on it is irrelevant) and ignores its query: `?timezone=` of
 * screenpipe's UI is accepted whatever its value, since every time is ISO 8601 UTC with a `Z`.
 * Writes authenticate before their bodies are read; POST /archive/run reads no body at all
 * (screenpipe's app sends none, and no Content-Type).
 */
export function archiveRoutes(deps: ArchiveRoutesDeps): Router {
  const router = Router();
  const read = requireScope('archive:read', deps.auth);
  const write = requireScope('archive:write', deps.auth);
  const body = jsonBody(limits.maxBodyBytes);

  const relay = (command: ArchiveCommand, res: Response, timeoutMs = deps.timeoutMs) =>
    countedCall(deps.metrics, { action: command.action }, () =>
      sendArchiveCommand(deps.bus, command, { timeoutMs, requestId: res.locals.requestId }),
    );

  const answer = (res: Response, action: keyof typeof messages, reply: ArchiveAnswer): void => {
    const unreadable = reply.unreadable_count ?? 0;
    const result: ArchiveActionResult = {
      success: true,
      message:
        reply.restored === undefined
          ? messages[action]
          : `${messages[action]}: ${reply.restored} items restored` +
            (unreadable > 0
              ? `; ${unreadable} archived object${unreadable === 1 ? '' : 's'} could not be read, their items are not restored (see unreadable)`
              : ''),
      status: reply.status,
    };
    if (reply.restored !== undefined) result.restored = reply.restored;
    if (reply.unreadable !== undefined) result.unreadable = reply.unreadable;
    if (reply.unreadable_count !== undefined) result.unreadable_count = reply.unreadable_count;
    res.json(result);
  };

  router.get(archivePaths.status, read, async (_req, res) => {
    const reply = await relay({ action: 'status' }, res);
    res.json(reply.status);
  });

  router.post(archivePaths.configure, write, ...body, async (req, res) => {
    // Every field is optional, so a bodiless JSON post is an empty change.
    const request = validators.archiveConfigureRequest.parse(req.body ?? {});
    answer(res, 'configure', await relay({ action: 'configure', request }, res));
  });

  router.post(archivePaths.init, write, ...body, async (req, res) => {
    // screenpipe's app also sends its cloud `token`: tolerated, never relayed or logged.
    const { retention_days } = validators.archiveInitRequest.parse(req.body ?? {});
    const request = retention_days === undefined ? {} : { retention_days };
    answer(res, 'init', await relay({ action: 'init', request }, res));
  });

  router.post(archivePaths.run, write, async (_req, res) => {
    answer(res, 'run', await relay({ action: 'run' }, res));
  });

  // Audited (ADR 0019): it authenticates and reads its body itself, so that a refusal by a
  // valid token (403 scope, 400 range) leaves its row too.
  const readBody = jsonBodyReader(limits.maxBodyBytes);
  router.post(archivePaths.restore, async (req, res) => {
    const started = performance.now();
    let actor: string | undefined;
    let range: Record<string, unknown> = {};
    let failure: unknown;
    try {
      authenticate(req, 'archive:write', deps.auth, ({ id }) => {
        actor = id;
      });
      await readBody(req, res);
      const request = validators.archiveRestoreRequest.parse(req.body);
      range = { ...request };
      answer(
        res,
        'restore',
        await relay({ action: 'restore', request }, res, deps.restoreTimeoutMs),
      );
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      const { status, code } = answeredWith(failure);
      if (actor !== undefined)
        deps.trail?.record({
          action: 'archive.restore',
          actor,
          device: typeof range.device_name === 'string' ? range.device_name : null,
          status,
          code,
          seconds: (performance.now() - started) / 1000,
          details: range,
          requestId: res.locals.requestId,
        });
    }
  });

  return router;
}

/** The archive paths and their methods, for the app's 405 answers. */
export const archiveRouteMethods: Record<string, string[]> = {
  [archivePaths.status]: ['GET'],
  [archivePaths.configure]: ['POST'],
  [archivePaths.init]: ['POST'],
  [archivePaths.run]: ['POST'],
  [archivePaths.restore]: ['POST'],
};

import type { KeyObject } from 'node:crypto';
import { Router, type ErrorRequestHandler, type Request, type Response } from 'express';
import {
  clickByIndexRoute,
  limits,
  listElementsRoute,
  pressKeyRoute,
  typeByIndexRoute,
  validators,
  type ClickCommand,
  type PressCommand,
  type TypeCommand,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';
import type { TokenGrant } from '../auth/tokens';
import type { AuditTrail } from '../domain/audit-trail';
import {
  ListingDevices,
  listingOf,
  operationResultOf,
  sendOperatorCommand,
  toClickCommand,
  toListCommand,
  toPressCommand,
  toTypeCommand,
} from '../domain/operator-commands';
import type { OperatorPresenceTracker } from '../domain/operator-presence';
import type { OperatorMetrics } from '../metrics';
import { assertDeviceAllowed, authenticate, type AuthOptions } from './authenticate';
import { answeredWith } from './http-errors';
import { jsonBodyReader } from './json-body';

export type OperatorAction = 'list' | 'press' | 'click' | 'type';

/** What the handler learned about the command so far: who, which device, element, key ... */
export type AuditEntry = Record<string, unknown> & { tokenId: string | null };

export type AuditedHandler = (req: Request, res: Response, entry: AuditEntry) => Promise<void>;

export const operatorPaths = {
  list: listElementsRoute.path,
  press: pressKeyRoute.path,
  click: clickByIndexRoute.path,
  type: typeByIndexRoute.path,
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
  /** Where press, click and type attempts become audit rows (ADR 0019). */
  trail?: AuditTrail | undefined;
}

/**
 * The audit of failures on the operator paths before their routes ran, then the routes: mount
 * both, in this order (`app.use(operatorRoutes(deps))`). Each handler reads top to bottom:
 * audit, authenticate, read and validate the body, pick the device, send the command, answer.
 */
export function operatorRoutes(deps: OperatorRoutesDeps): [ErrorRequestHandler, Router] {
  const router = Router();
  const { audited, earlyFailures } = createOperatorAudit({
    logger: deps.logger,
    metrics: deps.metrics,
    trail: deps.trail,
    paths: new Map<string, OperatorAction>([
      [operatorPaths.list, 'list'],
      [operatorPaths.press, 'press'],
      [operatorPaths.click, 'click'],
      [operatorPaths.type, 'type'],
    ]),
  });
  const readBody = jsonBodyReader(limits.maxBodyBytes);
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
    grant: TokenGrant,
    deviceName: string | undefined,
    listing?: { cacheId: string | undefined },
  ): string => {
    const listed = listing && listings.deviceFor(grant.id, listing.cacheId);
    const device =
      deviceName ?? listed ?? deps.presence.resolve(deviceName, { allowed: grant.devices });
    assertDeviceAllowed(grant, device);
    return device;
  };

  router.post(
    operatorPaths.list,
    audited('list', async (req, res, audit) => {
      const grant = authenticate(req, 'operator', deps.auth, ({ id }) => {
        audit.tokenId = id;
      });
      await readBody(req, res);
      const request = validators.listElementsRequest.parse(req.body);
      audit.appName = request.app_name;
      audit.device = request.device_name;
      const device = deviceFor(grant, request.device_name);
      audit.device = device;
      const command = toListCommand(request, deps.timeoutMs, grant.id);
      const result = await sendOperatorCommand(deps.bus, device, command, options(res));
      const listing = listingOf(result);
      const { cache_id: cacheId, ttl_seconds: ttl } = listing.cache_info;
      listings.remember(grant.id, cacheId, device, ttl * 1000);
      audit.elements = listing.cache_info.element_count;
      audit.cacheId = listing.cache_info.cache_id;
      res.json(listing);
    }),
  );

  /**
   * Press, click and type: one element of a listing, by index. Each parses its body, makes its
   * command and names what its audit line adds (the key and modifiers; never a typed text).
   */
  const byIndex = <ElementRequest extends { device_name?: string | undefined }>(
    action: Exclude<OperatorAction, 'list'>,
    parse: (body: unknown) => ElementRequest,
    toCommand: (request: ElementRequest, timeoutMs: number, requestedBy: string) => ElementCommand,
  ) =>
    audited(action, async (req, res, audit) => {
      const grant = authenticate(req, 'operator', deps.auth, ({ id }) => {
        audit.tokenId = id;
      });
      await readBody(req, res);
      const request = parse(req.body);
      const command = toCommand(request, deps.timeoutMs, grant.id);
      Object.assign(audit, {
        elementIndex: command.element_index,
        cacheId: command.cache_id,
        ...auditDetails(command),
        device: request.device_name,
      });
      const device = deviceFor(grant, request.device_name, {
        cacheId: command.cache_id,
      });
      audit.device = device;
      const result = await sendOperatorCommand(deps.bus, device, command, options(res));
      res.json(operationResultOf(result));
    });

  router.post(
    operatorPaths.press,
    byIndex('press', (body) => validators.pressKeyRequest.parse(body), toPressCommand),
  );
  router.post(
    operatorPaths.click,
    byIndex('click', (body) => validators.clickByIndexRequest.parse(body), toClickCommand),
  );
  router.post(
    operatorPaths.type,
    byIndex('type', (body) => validators.typeByIndexRequest.parse(body), toTypeCommand),
  );
  return [earlyFailures, router];
}

type ElementCommand = PressCommand | ClickCommand | TypeCommand;

/** What a command adds to its audit line beyond the element: how much was typed, never what. */
function auditDetails(command: ElementCommand): Record<string, unknown> {
  switch (command.action) {
    case 'press':
      return { key: command.key, modifiers: command.modifiers };
    case 'type':
      return { textLength: Array.from(command.text).length };
    case 'click':
      return {};
  }
}

/**
 * Remote input into someone's desktop: every command attempt, refused or not, leaves one audit
 * line (who, which device, which element and key, the status, how long) and is counted. Press,
 * click and type by a known token also become audit rows (`trail`, ADR 0019): the same facts,
 * the typed text's length and never the text; attempts without a valid token (401, or a 405
 * before the routes ran) have no actor and stay log lines only.
 * `audited` wraps a whole operator route handler, which authenticates (401/403) and reads its
 * body (400/413/415) itself, so every refusal passes through it. `earlyFailures` audits what
 * failed on the operator paths before their routes ran (a wrong method: 405), with tokenId
 * null: mounted before the routes, it never sees their errors.
 */
export function createOperatorAudit(deps: {
  logger: Logger;
  metrics: OperatorMetrics;
  trail?: AuditTrail | undefined;
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
    const { status, reason, code } = answeredWith(failure);
    deps.metrics.commands.inc({ action, result: reason });
    if (action !== 'list' && entry.tokenId !== null) {
      deps.trail?.record({
        action: `operator.${action}`,
        actor: entry.tokenId,
        device: typeof entry.device === 'string' ? entry.device : null,
        status,
        code,
        seconds: seconds ?? null,
        details: rowDetails(entry),
        requestId: res.locals.requestId,
      });
    }
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

/** What an audit row says was asked, from what the handler learned (the text's length only). */
function rowDetails(entry: AuditEntry): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  if (entry.elementIndex !== undefined) details.element_index = entry.elementIndex;
  if (entry.cacheId !== undefined) details.cache_id = entry.cacheId;
  if (entry.key !== undefined) details.key = entry.key;
  if (entry.modifiers !== undefined) details.modifiers = entry.modifiers;
  if (entry.textLength !== undefined) details.text_length = entry.textLength;
  return details;
}

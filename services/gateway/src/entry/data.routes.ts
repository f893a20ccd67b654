import { Router, type Request, type Response } from 'express';
import {
  dataDeleteDeviceRoute,
  dataDeleteRangeRoute,
  limits,
  toDataDeleteRange,
  toDeletedDevice,
  validators,
  type DataDeleteCommandRequest,
  type DataDeletedCounts,
  type DataDeleteResult,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import type { Logger } from '@screenfleet/runtime';
import type { TokenGrant } from '../auth/tokens';
import type { AuditTrail } from '../domain/audit-trail';
import { sendArchiveCommand } from '../domain/archive-commands';
import { countedCall } from '../domain/worker-call';
import type { ArchiveMetrics } from '../metrics';
import { assertDeviceAllowed, authenticate, type AuthOptions } from './authenticate';
import { HttpError } from './http-error';
import { answeredWith } from './http-errors';
import { jsonBodyReader } from './json-body';

export const dataPaths = {
  deleteRange: dataDeleteRangeRoute.path,
  deleteDevice: dataDeleteDeviceRoute.path,
} as const;

/** The data paths and their methods, for the app's 405 answers. */
export const dataRouteMethods: Record<string, string[]> = {
  [dataPaths.deleteRange]: ['POST'],
  [dataPaths.deleteDevice]: ['POST'],
};

export interface DataRoutesDeps {
  bus: Pick<Bus, 'call'>;
  auth: AuthOptions;
  /** Deletes are archive.rpc commands: counted with the archive calls, action `delete`. */
  metrics: ArchiveMetrics;
  logger: Logger;
  /** A delete of a device's whole history may take as long as a restore. */
  timeoutMs: number;
  /** Where delete attempts become audit rows (ADR 0019). */
  trail?: AuditTrail | undefined;
}

type Audit = Record<string, unknown> & { tokenId: string | null };

/**
 * Deleting what was captured (screenpipe's POST /data/delete-range and /data/delete-device),
 * carried out by the archive worker (docs/adr/0014): it owns the content store's deletes, the
 * media root and the record of deleted archived items. Scope `data:delete`, which the tokenless
 * loopback grant never has. A token bound to devices deletes only those: naming another is a
 * 403, as on /add and /search, whether or not that device has data (nothing leaks); a range
 * without a device_name is a 403 for it too (it would cover other devices' data). Every attempt,
 * refused or not, leaves one audit line with the token id, and one audit row when the token was
 * valid (ADR 0019).
 */
export function dataRoutes(deps: DataRoutesDeps): Router {
  const router = Router();
  const logger = deps.logger.child({ component: 'data-audit' });
  const readBody = jsonBodyReader(limits.maxBodyBytes);

  const audited =
    (
      action: 'delete-range' | 'delete-device',
      handler: (req: Request, res: Response, audit: Audit) => Promise<void>,
    ) =>
    async (req: Request, res: Response): Promise<void> => {
      const audit: Audit = { tokenId: null };
      const started = performance.now();
      let failure: unknown;
      try {
        await handler(req, res, audit);
      } catch (error) {
        failure = error;
        throw error;
      } finally {
        const { status, reason, code } = answeredWith(failure);
        if (audit.tokenId !== null) {
          deps.trail?.record({
            action: action === 'delete-range' ? 'data.delete_range' : 'data.delete_device',
            actor: audit.tokenId,
            device: typeof audit.device === 'string' ? audit.device : null,
            status,
            code,
            seconds: (performance.now() - started) / 1000,
            details: rowDetails(action, audit),
            requestId: res.locals.requestId,
          });
        }
        logger.info(
          {
            audit: 'data',
            requestId: res.locals.requestId,
            action,
            ...audit,
            status,
            result: reason,
          },
          'data delete',
        );
      }
    };

  const relay = async (res: Response, request: DataDeleteCommandRequest, audit: Audit) => {
    const answer = await countedCall(deps.metrics, { action: 'delete' }, () =>
      sendArchiveCommand(
        deps.bus,
        { action: 'delete', request },
        { timeoutMs: deps.timeoutMs, requestId: res.locals.requestId },
      ),
    );
    const deleted = answer.deleted!;
    Object.assign(audit, {
      itemsDeleted: deleted.items_deleted,
      mediaFilesDeleted: deleted.media_files_deleted,
      archivedItemsDeleted: deleted.archived_items_deleted,
    });
    const result: DataDeleteResult = {
      success: true,
      message: describe(request, deleted),
      ...deleted,
    };
    res.json(result);
  };

  router.post(
    dataPaths.deleteRange,
    audited('delete-range', async (req, res, audit) => {
      const grant = authenticate(req, 'data:delete', deps.auth, ({ id }) => {
        audit.tokenId = id;
      });
      await readBody(req, res);
      const range = toDataDeleteRange(validators.dataDeleteRangeRequest.parse(req.body ?? {}));
      Object.assign(audit, { from: range.start, to: range.end, device: range.device_name });
      assertMayDelete(grant, range.device_name);
      await relay(
        res,
        {
          from: range.start,
          to: range.end,
          ...(range.device_name !== undefined ? { device_name: range.device_name } : {}),
        },
        audit,
      );
    }),
  );

  router.post(
    dataPaths.deleteDevice,
    audited('delete-device', async (req, res, audit) => {
      const grant = authenticate(req, 'data:delete', deps.auth, ({ id }) => {
        audit.tokenId = id;
      });
      await readBody(req, res);
      const device = toDeletedDevice(validators.dataDeleteDeviceRequest.parse(req.body ?? {}));
      audit.device = device;
      assertMayDelete(grant, device);
      await relay(res, { device_name: device }, audit);
    }),
  );
  return router;
}

/** A bound token deletes only its own devices, and only by naming one. */
function assertMayDelete(grant: TokenGrant, device: string | undefined): void {
  if (device !== undefined) return assertDeviceAllowed(grant, device);
  if (grant.devices) {
    throw new HttpError(
      403,
      'forbidden_device',
      `token ${grant.id} is bound to devices: name one of them in device_name (a range without one covers every device)`,
      [
        {
          path: 'device_name',
          rule: 'required',
          detail: 'device_name is required for a token bound to devices',
        },
      ],
    );
  }
}

function describe(request: DataDeleteCommandRequest, deleted: DataDeletedCounts): string {
  const what =
    request.device_name === undefined ? 'every device' : `device "${request.device_name}"`;
  const when =
    request.from !== undefined && request.to !== undefined
      ? ` from ${request.from} to ${request.to}`
      : '';
  return (
    `deleted ${deleted.items_deleted} items and ${deleted.media_files_deleted} media files of ${what}${when}; ` +
    `${deleted.archived_items_deleted} archived items will never be restored` +
    (deleted.archived_objects_unreadable > 0
      ? ` (${deleted.archived_objects_unreadable} archived objects could not be read to count theirs; they are covered all the same)`
      : '')
  );
}

/** What an audit row says was asked: the range and its device, or the device. */
function rowDetails(action: 'delete-range' | 'delete-device', audit: Audit) {
  if (action === 'delete-device')
    return typeof audit.device === 'string' ? { device_name: audit.device } : {};
  return Object.fromEntries(
    [
      ['start', audit.from],
      ['end', audit.to],
      ['device_name', audit.device],
    ].filter(([, value]) => value !== undefined),
  ) as Record<string, unknown>;
}

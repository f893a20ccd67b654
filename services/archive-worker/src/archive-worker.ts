import { setTimeout as delay } from 'node:timers/promises';
import {
  initialArchiveState,
  limits,
  queueNames,
  type ArchiveCommand,
  type ArchiveReply,
  type DataDeleteCommandRequest,
  type ArchiveRestoreRequest,
  type ArchiveSettings,
  type ArchiveStatus,
} from '@screenfleet/contracts';
import type { Bus, Subscription } from '@screenfleet/bus';
import type { BackoffOptions, Logger, Registry } from '@screenfleet/runtime';
import type {
  ArchiveStateStore,
  ArchiveStore,
  AuditStore,
  ContentStore,
} from '@screenfleet/storage';
import { createArchiveCommands } from './domain/archive-commands';
import { createAuditRetention } from './domain/audit-retention';
import { createArchiver, type PassStep } from './domain/archive-pass';
import { toArchiveStatus } from './domain/archive-status';
import { createPendingCounter } from './domain/pending-counter';
import { createStateSnapshot } from './domain/state-snapshot';
import type { MediaFiles, MediaWriter } from './domain/media-files';
import {
  openKeysFor,
  scanSeals,
  sealsReadable,
  unreadableAtStartMessage,
} from './domain/archive-keys';
import type { ArchiveKeyring } from './domain/chunk-codec';
import { refuseRestoreWhileEnabled, restoreLastError, restoreRange } from './domain/restore';
import { taskHolder, withTaskLease } from './domain/archive-task';
import { deleteCaptured, toDeletedCounts } from './domain/delete-data';
import { createArchiveLoop } from './entry/archive-loop';
import { createArchiveRpcHandler } from './entry/archive.rpc';
import { createArchiveMetrics } from './metrics';

/**
 * Items per content store delete: one transaction each (one writer operation in the embedded
 * mode, a few milliseconds), so captures keep being written between the chunks of a large delete.
 */
const DELETE_CHUNK_ITEMS = 100;
/**
 * After each chunk a delete waits this many times as long as the chunk took: it takes at most a
 * quarter of the store's writing, whatever the load. A delete writes far more than it removes
 * (search index, indexes: ~4 KB of WAL an item here), and back to back it saturated the disk:
 * POST /add p99 of another device went from 16 to 142 ms (100-item chunks) or 408 ms (500); at a
 * quarter, 19 ms, deleting ~3,600 items/s (probe on bench:delete's 1M-item file).
 */
const DELETE_PAUSE_RATIO = 3;

/** archive.rpc requests handled at once by one worker. */
const RPC_PREFETCH = 8;

export interface ArchiveWorkerDeps {
  bus: Pick<Bus, 'serve'>;
  content: Pick<
    ContentStore,
    | 'scanRange'
    | 'countRange'
    | 'deleteByIds'
    | 'filePathsInUse'
    | 'insertItems'
    | 'deleteRange'
    | 'forgetDevice'
  >;
  archive: Pick<
    ArchiveStore,
    'put' | 'verify' | 'size' | 'list' | 'get' | 'delete' | 'removeUnfinished' | 'ensureReady'
  >;
  state: ArchiveStateStore;
  /**
   * The audit rows, whose expired ones the lease holder deletes (AUDIT_RETENTION_DAYS); absent:
   * no audit retention (the archive's own tests). Given with auditRetentionDays.
   */
  audit?: Pick<AuditStore, 'deleteOlderThan'>;
  auditRetentionDays?: number;
  /** Rows per audit delete (tests make it small); default AUDIT_DELETE_CHUNK_ROWS. */
  auditChunkRows?: number;
  media?: MediaFiles;
  /** Puts media files back on restore; absent: they stay in the archive. */
  mediaWriter?: MediaWriter;
  /** The configured keys (archiveKeyring), newest first; absent: objects are written plain. */
  keyring?: ArchiveKeyring;
  /** Start although some archived objects open with none of the keys (ARCHIVE_ALLOW_UNREADABLE). */
  allowUnreadable?: boolean;
  /** The environment's settings: the first state's, and storage_limit at every start. */
  defaults: ArchiveSettings;
  chunkSize: number;
  intervalMs: number;
  leaseTtlMs: number;
  retry: BackoffOptions;
  /** Unique per process: who holds the lease. */
  holderId: string;
  logger: Logger;
  registry: Registry;
  now?: () => Date;
  /** Tests stop a pass here to play a crash. */
  onStep?: (step: PassStep) => Promise<void>;
}

const PENDING_CACHE_MS = 1000;
/**
 * Status answers from a snapshot of the state (state-snapshot.ts): never from a read that started
 * over STATE_MAX_AGE_MS ago, so another worker's change shows within a second; a read starts
 * behind the answers once it is STATE_REFRESH_AFTER_MS old, so a polled worker reads about once
 * every 0.8 s and no status call waits for a state read.
 */
const STATE_MAX_AGE_MS = 1000;
const STATE_REFRESH_AFTER_MS = 800;

/**
 * The archive worker: the loop (only the lease holder archives) and the archive.rpc server
 * (every worker answers, from the shared state).
 */
export function createArchiveWorker(deps: ArchiveWorkerDeps) {
  const logger = deps.logger.child({ component: 'archive' });
  const metrics = createArchiveMetrics(deps.registry, () => status());
  const now = deps.now ?? (() => new Date());
  const snapshot = createStateSnapshot({
    load: () => deps.state.load(initialArchiveState(deps.defaults, now())),
    now,
    maxAgeMs: STATE_MAX_AGE_MS,
    refreshAfterMs: STATE_REFRESH_AFTER_MS,
  });
  // Every state access of this worker goes through here, so the snapshot sees its own writes.
  const state = snapshot.track(deps.state);
  const commands = createArchiveCommands({ state, defaults: deps.defaults, now });
  const archiver = createArchiver({
    content: deps.content,
    archive: deps.archive,
    state,
    ...(deps.media ? { media: deps.media } : {}),
    ...(deps.keyring ? { keyring: deps.keyring } : {}),
    chunkSize: deps.chunkSize,
    defaults: deps.defaults,
    now,
    ...(deps.onStep ? { onStep: deps.onStep } : {}),
    mayContinue: () => loop.mayContinue(),
    holdsLease: () => loop.confirmLease(),
    observer: {
      chunkArchived({ items, media, bytes }) {
        pending.invalidate();
        metrics.chunks.inc();
        metrics.items.inc(items);
        metrics.mediaFiles.inc(media);
        metrics.bytes.inc(bytes);
      },
      // Once per file: its items are archived with it, so no later pass sees it again.
      mediaSkipped(file) {
        metrics.mediaSkipped.inc({ reason: file.reason });
        logger.warn(file, 'archive: media file not archived (the items are)');
      },
      mediaNotRemoved(file) {
        metrics.mediaNotRemoved.inc();
        logger.warn(file, 'archive: archived media file could not be deleted (left on disk)');
      },
    },
  });
  const auditRetention = deps.audit && auditRetentionOf(deps.audit);
  function auditRetentionOf(audit: Pick<AuditStore, 'deleteOlderThan'>) {
    if (deps.auditRetentionDays === undefined) {
      throw new TypeError('the archive worker got an audit store without auditRetentionDays');
    }
    return createAuditRetention({
      audit,
      retentionDays: deps.auditRetentionDays,
      now,
      ...(deps.auditChunkRows ? { chunkRows: deps.auditChunkRows } : {}),
      observer: { rowsDeleted: (count) => metrics.auditRowsDeleted.inc(count) },
    });
  }
  const loop = createArchiveLoop({
    ...(auditRetention ? { auditRetention } : {}),
    archiver,
    commands,
    leases: state,
    holderId: deps.holderId,
    leaseTtlMs: deps.leaseTtlMs,
    intervalMs: deps.intervalMs,
    retry: deps.retry,
    logger,
    metrics,
    now,
  });
  let subscription: Subscription | undefined;
  const pending = createPendingCounter({
    count: (settings) => archiver.pendingCount(settings),
    now,
    maxAgeMs: PENDING_CACHE_MS,
  });
  // During a pass the count moves with every chunk: count afresh and keep nothing, but let the
  // calls that arrive while one count runs share it.
  let countDuringPass: Promise<number> | undefined;
  const pendingCount = (settings: ArchiveSettings): Promise<number> => {
    if (!archiver.isUploading()) return pending.get(settings);
    pending.invalidate();
    countDuringPass ??= archiver
      .pendingCount(settings)
      .finally(() => (countDuringPass = undefined));
    return countDuringPass;
  };

  async function status(): Promise<ArchiveStatus> {
    const shared = await snapshot.get();
    const local = archiver.isUploading();
    // Another worker's upload shows in the state while its lease is fresh (a dead one's does not).
    const remote =
      shared.uploading_since !== null &&
      now().getTime() - shared.updated_at.getTime() < deps.leaseTtlMs;
    return toArchiveStatus(shared, {
      pendingCount: await pendingCount(shared.settings),
      isUploading: local || remote,
      mediaFilesPending: local ? archiver.mediaFilesPending() : shared.media_files_pending,
    });
  }

  async function execute(
    command: ArchiveCommand,
  ): Promise<Extract<ArchiveReply, { outcome: 'ok' }>> {
    switch (command.action) {
      case 'status':
        break;
      case 'run':
        await commands.requestRun();
        loop.runNow();
        break;
      case 'configure':
        await commands.configure(command.request);
        break;
      case 'init':
        await commands.init(command.request);
        loop.runNow();
        break;
      case 'restore':
        return restore(command.request);
      case 'delete':
        return deleteData(command.request);
    }
    return { outcome: 'ok', status: await status() };
  }

  /**
   * A restore over archive.rpc: never beside a pass (it would delete what comes back), a rekey
   * or another restore (the task lease); objects it cannot read are answered by name, logged
   * and put in last_error, while the rest is restored.
   */
  async function restore(
    request: ArchiveRestoreRequest,
  ): Promise<Extract<ArchiveReply, { outcome: 'ok' }>> {
    refuseRestoreWhileEnabled((await commands.load()).settings);
    const range = {
      from: new Date(request.from),
      to: new Date(request.to),
      ...(request.device_name !== undefined ? { device: request.device_name } : {}),
    };
    const leases = { leases: state, ttlMs: deps.leaseTtlMs, now };
    const report = await withTaskLease(
      leases,
      taskHolder('restore', deps.holderId),
      async (task) => {
        // Enabled meanwhile: checked again now that no pass can start.
        const current = await commands.load();
        refuseRestoreWhileEnabled(current.settings);
        const restored = await restoreRange(
          {
            archive: deps.archive,
            content: deps.content,
            keys: openKeysFor(deps.keyring, current),
            ...(deps.mediaWriter ? { media: deps.mediaWriter } : {}),
            stillHeld: task.stillHeld,
            ...(current.deleted_ranges ? { deleted: current.deleted_ranges } : {}),
          },
          range,
        );
        const lastError = restoreLastError(range, restored);
        if (lastError) await state.update({ last_error: lastError, updated_at: now() });
        return restored;
      },
    );
    pending.invalidate();
    const { unreadable, ...counts } = report;
    if (unreadable.length > 0) logger.warn({ unreadable, request }, 'archive restore: unreadable');
    logger.info({ ...counts, request }, 'archive restored');
    return {
      outcome: 'ok',
      status: await status(),
      restored: report.restored,
      unreadable: unreadable.slice(0, limits.maxUnreadableListed),
      unreadable_count: unreadable.length,
    };
  }

  /**
   * A delete of captured data over archive.rpc (POST /data/delete-range, /data/delete-device):
   * never beside a pass, a restore or a rekey (the task lease), whether the archive is enabled
   * or not. The gateway's audit line says who asked; this log line says what went.
   */
  async function deleteData(
    request: DataDeleteCommandRequest,
  ): Promise<Extract<ArchiveReply, { outcome: 'ok' }>> {
    const range = {
      ...(request.from !== undefined ? { from: new Date(request.from) } : {}),
      ...(request.to !== undefined ? { to: new Date(request.to) } : {}),
      ...(request.device_name !== undefined ? { device: request.device_name } : {}),
    };
    const leases = { leases: state, ttlMs: deps.leaseTtlMs, now };
    const report = await withTaskLease(leases, taskHolder('delete', deps.holderId), async (task) =>
      deleteCaptured(
        {
          content: deps.content,
          archive: deps.archive,
          state,
          defaults: deps.defaults,
          keys: openKeysFor(deps.keyring, await commands.load()),
          ...(deps.media ? { media: deps.media } : {}),
          chunkSize: DELETE_CHUNK_ITEMS,
          afterChunk: (tookMs) => delay(tookMs * DELETE_PAUSE_RATIO),
          now,
          stillHeld: task.stillHeld,
          mediaNotRemoved(file) {
            metrics.mediaNotRemoved.inc();
            logger.warn(file, 'delete: media file could not be removed (left on disk)');
          },
        },
        range,
      ),
    );
    pending.invalidate();
    const deleted = toDeletedCounts(report);
    if (report.unreadable.length > 0) {
      logger.warn({ unreadable: report.unreadable.slice(0, 10), request }, 'delete: unreadable');
    }
    logger.info({ request, ...deleted, devices: deleted.devices.length }, 'captured data deleted');
    return { outcome: 'ok', status: await status(), deleted };
  }

  /**
   * Refuses to start when archived objects are sealed with keys that are not configured (a
   * restore could not open them), unless told to go on. The state says which keys the objects
   * may be sealed with, so this reads nothing from the store when they all are; otherwise (or in
   * an archive from before key ids) the manifests are read to find and name those objects, and
   * what they really use is written back.
   */
  async function checkKeys(): Promise<void> {
    const current = await commands.load();
    if (sealsReadable(deps.keyring, current.sealed_with)) return;
    const scan = await scanSeals(deps.archive, deps.keyring);
    // Only while no pass or rekey runs, which add or replace seals themselves.
    const holder = taskHolder('check', deps.holderId);
    if (await state.acquireLease(holder, deps.leaseTtlMs, now(), 'task').catch(() => false)) {
      await state
        .update({ sealed_with: scan.seals })
        .finally(() => state.releaseLease(holder, 'task'));
    }
    if (scan.unreadableCount === 0) return;
    const message = unreadableAtStartMessage(scan);
    if (!deps.allowUnreadable) throw new Error(message);
    logger.warn({ unreadable: scan.unreadable, count: scan.unreadableCount }, message);
  }

  return {
    archiver,
    status,
    execute,
    async start(): Promise<void> {
      await deps.archive.ensureReady();
      await commands.applyStorageLimit(deps.defaults.storage_limit);
      await checkKeys();
      // Several at once: a status call must not wait behind a restore or a slow store call.
      subscription = await deps.bus.serve(
        queueNames.archiveRpc,
        createArchiveRpcHandler({ execute, metrics, logger }),
        { prefetch: RPC_PREFETCH },
      );
      loop.start();
      logger.info(
        {
          holderId: deps.holderId,
          intervalMs: deps.intervalMs,
          chunkSize: deps.chunkSize,
          // Ids, not keys: what an operator matches with the ids errors and objects name.
          sealsWith: deps.keyring?.writer?.id ?? 'plain',
          opensWith: deps.keyring?.readers.map((reader) => reader.id) ?? [],
        },
        'archive worker started',
      );
    },
    /** Stops answering, lets the chunk in hand finish, gives the lease up. */
    async stop(): Promise<void> {
      await subscription?.cancel();
      await loop.stop();
    },
  };
}

export type ArchiveWorker = ReturnType<typeof createArchiveWorker>;

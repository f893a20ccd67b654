/**
 * `npm run archive:restore -- --from <ISO> --to <ISO> [--device NAME]`: puts archived items of
 * [from, to) back into the content store, verifying and decrypting every chunk first. Works in
 * both modes (entry/cli-stores.ts): with MONGODB_URL on the distributed database, without it on
 * the embedded mode's SQLite file under DATA_DIR. Reads ARCHIVE_STORE, S3_*,
 * ARCHIVE_ENCRYPTION_KEYS, ARCHIVE_MEDIA_ROOT (to put media files back) as the worker does.
 * Objects it cannot read (a key not configured, damage) are listed in its report and in the
 * archive's last_error; every other item is restored. Exits 1 when there were any.
 * Safe to repeat: items already in the content store are counted, not duplicated. Refused while
 * the archive is enabled (its next pass would archive the restored items again).
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { initialArchiveState } from '@screenfleet/contracts';
import { loadConfig, runMain } from '@screenfleet/runtime';
import { checkArchiveConfig, parseEncryptionKeys } from '../config';
import { openKeysFor } from '../domain/archive-keys';
import { archiveKeyring } from '../domain/chunk-codec';
import { taskHolder, withTaskLease } from '../domain/archive-task';
import { refuseRestoreWhileEnabled, restoreLastError, restoreRange } from '../domain/restore';
import { createLocalMediaWriter } from '../local-media-files';
import { archiveCliConfigSpec, openCliStores } from './cli-stores';

void runMain(
  async () => {
    const { values } = parseArgs({
      options: {
        from: { type: 'string' },
        to: { type: 'string' },
        device: { type: 'string' },
      },
    });
    const from = parseDate('--from', values.from);
    const to = parseDate('--to', values.to);
    if (from >= to) throw new Error('--from must be before --to');
    const config = loadConfig(archiveCliConfigSpec);
    checkArchiveConfig(config);
    const keyring = archiveKeyring(parseEncryptionKeys(config));
    const stores = await openCliStores(config);
    try {
      const current = await stores.state.load(
        initialArchiveState(
          {
            enabled: config.enabled,
            retention_days: config.retentionDays,
            storage_limit: config.storageLimit,
          },
          new Date(),
        ),
      );
      refuseRestoreWhileEnabled(current.settings);
      const leases = { leases: stores.state, ttlMs: config.leaseTtl, now: () => new Date() };
      // Never beside a pass of a running worker (it would delete what comes back), nor a rekey.
      const holder = taskHolder('restore', `archive-restore@${hostname()}:${process.pid}`);
      const report = await withTaskLease(leases, holder, async (task) => {
        const latest = await stores.state.load(current);
        refuseRestoreWhileEnabled(latest.settings);
        const range = { from, to, ...(values.device ? { device: values.device } : {}) };
        const restored = await restoreRange(
          {
            archive: stores.archive,
            content: stores.content,
            keys: openKeysFor(keyring, latest),
            ...(config.mediaRoot ? { media: createLocalMediaWriter(config.mediaRoot) } : {}),
            stillHeld: task.stillHeld,
            // What POST /data/delete-* deleted never comes back, whichever way it is restored.
            ...(latest.deleted_ranges ? { deleted: latest.deleted_ranges } : {}),
          },
          range,
        );
        const lastError = restoreLastError(range, restored);
        if (lastError) await stores.state.update({ last_error: lastError, updated_at: new Date() });
        return restored;
      });
      process.stdout.write(`${JSON.stringify(report)}\n`);
      // Every readable item is back; the exit code says some were not.
      if (report.unreadable.length > 0) process.exitCode = 1;
    } finally {
      await stores.close();
    }
  },
  { service: 'archive-restore' },
);

function parseDate(flag: string, text: string | undefined): Date {
  const date = text === undefined ? undefined : new Date(text);
  if (!date || Number.isNaN(date.getTime()) || !/T.*(Z|[+-]\d{2}:\d{2})$/.test(text ?? '')) {
    throw new Error(`${flag} needs an ISO 8601 time with an offset, e.g. 2026-01-01T00:00:00Z`);
  }
  return date;
}

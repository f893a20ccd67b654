/**
 * `npm run archive:rekey`: seals every archived object anew under the newest key of
 * ARCHIVE_ENCRYPTION_KEYS (plain when none is configured), verifying each new object before the
 * old one is removed, so that older keys can then be dropped from the list (README, "Rotating
 * archive keys"). Works in both modes, as archive:restore does (entry/cli-stores.ts). Holds the
 * archive's task lease while it runs: running passes wait, a restore is refused; refused itself
 * while a pass or a restore runs. Safe to repeat: objects already sealed with the newest key are
 * left as they are. Prints a JSON report; exits 1 when some objects could not be read (they are
 * named, and stay as they were).
 */
import { hostname } from 'node:os';
import { initialArchiveState } from '@screenfleet/contracts';
import { loadConfig, runMain } from '@screenfleet/runtime';
import { checkArchiveConfig, parseEncryptionKeys } from '../config';
import { openKeysFor } from '../domain/archive-keys';
import { taskHolder, withTaskLease } from '../domain/archive-task';
import { archiveKeyring } from '../domain/chunk-codec';
import { rekeyArchive } from '../domain/rekey';
import { archiveCliConfigSpec, openCliStores } from './cli-stores';

void runMain(
  async () => {
    const config = loadConfig(archiveCliConfigSpec);
    checkArchiveConfig(config);
    const keyring = archiveKeyring(parseEncryptionKeys(config));
    const stores = await openCliStores(config);
    const now = () => new Date();
    try {
      const initial = initialArchiveState(
        {
          enabled: config.enabled,
          retention_days: config.retentionDays,
          storage_limit: config.storageLimit,
        },
        now(),
      );
      const leases = { leases: stores.state, ttlMs: config.leaseTtl, now };
      const holder = taskHolder('rekey', `archive-rekey@${hostname()}:${process.pid}`);
      const report = await withTaskLease(leases, holder, async (task) => {
        const state = await stores.state.load(initial);
        const result = await rekeyArchive({
          archive: stores.archive,
          keyring,
          keys: openKeysFor(keyring, state),
          stillHeld: task.stillHeld,
          // Added before an object is sealed with it, so that a start without the new key is
          // refused if this run is cut short. Left undefined for an archive from before key ids:
          // a start then reads the manifests anyway.
          recordSeal: async (seal) => {
            const { sealed_with } = await stores.state.load(initial);
            if (sealed_with && !sealed_with.includes(seal)) {
              await stores.state.update({ sealed_with: [...sealed_with, seal], updated_at: now() });
            }
          },
          // No pass runs meanwhile: storage_used is this command's to change.
          onRekeyed: async ({ bytes }) => {
            const { storage_used } = await stores.state.load(initial);
            await stores.state.update({ storage_used: storage_used + bytes, updated_at: now() });
          },
        });
        // Narrowed to what the objects are sealed with now: the replaced keys can be dropped.
        await stores.state.update({ sealed_with: result.sealedWith, updated_at: now() });
        return result;
      });
      process.stdout.write(
        `${JSON.stringify({ key: keyring.writer?.id ?? 'plain', ...report })}\n`,
      );
      if (report.unreadable.length > 0) process.exitCode = 1;
    } finally {
      await stores.close();
    }
  },
  { service: 'archive-rekey' },
);

import { existsSync } from 'node:fs';
import path from 'node:path';
import { defineConfig, type Config } from '@screenfleet/runtime';
import {
  embeddedDatabaseFile,
  openDistributedStores,
  openEmbeddedStores,
} from '@screenfleet/modes';
import type { ArchiveStateStore, ArchiveStore, ContentStore } from '@screenfleet/storage';
import { archiveConfigSpec, defaultArchiveDir } from '../config';
import { openArchiveStore } from '../open-stores';

/**
 * What the archive commands (`npm run archive:restore`, `archive:rekey`) read: the stores and
 * the keys, no broker, no ops server. With MONGODB_URL they work on the distributed mode's
 * database; without it, on the embedded mode's SQLite file and archive directory under
 * DATA_DIR, as `npm start` does (a running embedded process may have the file open: WAL lets
 * both work on it).
 */
export const archiveCliConfigSpec = defineConfig({
  mongodbUrl: {
    ...archiveConfigSpec.mongodbUrl,
    optional: true,
    doc: "MongoDB URL of the distributed mode's content store and archive state; unset: the embedded mode's SQLite file under DATA_DIR",
  },
  database: archiveConfigSpec.database,
  dataDir: {
    env: 'DATA_DIR',
    kind: 'string',
    default: './data',
    doc: 'Without MONGODB_URL: the embedded mode data directory (its SQLite file, and its archive directory unless ARCHIVE_DIR says otherwise)',
  },
  // Only for the state a command reads when the archive never ran (stored as the worker would).
  enabled: archiveConfigSpec.enabled,
  retentionDays: archiveConfigSpec.retentionDays,
  storageLimit: archiveConfigSpec.storageLimit,
  mediaRoot: archiveConfigSpec.mediaRoot,
  store: archiveConfigSpec.store,
  dir: {
    env: 'ARCHIVE_DIR',
    kind: 'string',
    optional: true,
    doc: 'Directory of the fs archive store (unset: DATA_DIR/archive without MONGODB_URL, data/archive with it)',
  },
  s3Endpoint: archiveConfigSpec.s3Endpoint,
  s3Region: archiveConfigSpec.s3Region,
  s3Bucket: archiveConfigSpec.s3Bucket,
  s3Prefix: archiveConfigSpec.s3Prefix,
  s3AccessKey: archiveConfigSpec.s3AccessKey,
  s3SecretKey: archiveConfigSpec.s3SecretKey,
  s3ForcePathStyle: archiveConfigSpec.s3ForcePathStyle,
  encryptionKeys: archiveConfigSpec.encryptionKeys,
  encryptionKey: archiveConfigSpec.encryptionKey,
  leaseTtl: archiveConfigSpec.leaseTtl,
});

export type ArchiveCliConfig = Config<typeof archiveCliConfigSpec>;

export interface CliStores {
  mode: 'distributed' | 'embedded';
  content: ContentStore;
  state: ArchiveStateStore;
  archive: ArchiveStore;
  close(): Promise<void>;
}

/** The stores of the mode the environment names (libs/modes); see archiveCliConfigSpec. */
export async function openCliStores(config: ArchiveCliConfig): Promise<CliStores> {
  const { mode, stores, dir } = config.mongodbUrl
    ? {
        mode: 'distributed' as const,
        stores: await openDistributedStores({ url: config.mongodbUrl, database: config.database }),
        dir: config.dir ?? archiveConfigSpec.dir.default,
      }
    : {
        mode: 'embedded' as const,
        stores: await openEmbeddedFile(config.dataDir),
        dir: config.dir ?? defaultArchiveDir(path.resolve(config.dataDir)),
      };
  const archive = openArchiveStore({ ...config, dir });
  return {
    mode,
    content: stores.content,
    state: stores.state,
    archive,
    async close() {
      await archive.close();
      await stores.close();
    },
  };
}

/** The embedded mode's SQLite file under DATA_DIR, which must exist. */
function openEmbeddedFile(dataDir: string) {
  const file = embeddedDatabaseFile(dataDir);
  // Opening would create an empty database: a mistyped DATA_DIR would then "restore 0 items".
  if (!existsSync(file)) {
    throw new Error(
      `no embedded database at ${file}: set DATA_DIR to the data directory of npm start, or MONGODB_URL for the distributed mode`,
    );
  }
  return openEmbeddedStores(file);
}

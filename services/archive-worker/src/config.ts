import path from 'node:path';
import { limits } from '@screenfleet/contracts';
import { ConfigError, defineConfig, serviceConfigSpec, type Config } from '@screenfleet/runtime';

export const archiveConfigSpec = defineConfig({
  ...serviceConfigSpec('ARCHIVE', 9466),
  mongodbUrl: {
    env: 'MONGODB_URL',
    kind: 'url',
    protocols: ['mongodb', 'mongodb+srv'],
    secret: true,
    doc: 'MongoDB URL (content store and archive state)',
  },
  database: {
    env: 'MONGODB_DATABASE',
    kind: 'string',
    default: 'screenfleet',
    doc: 'Database of the content store and the archive state',
  },
  connectionName: {
    env: 'ARCHIVE_CONNECTION_NAME',
    kind: 'string',
    default: 'archive-worker',
    doc: 'Name this worker shows the broker, and the start of its lease holder id',
  },
  enabled: {
    env: 'ARCHIVE_ENABLED',
    kind: 'boolean',
    // Opt-in, like screenpipe's: POST /archive/init or /archive/configure turns it on.
    default: false,
    doc: 'Archive from the first start (later changes via POST /archive/configure persist)',
  },
  retentionDays: {
    env: 'ARCHIVE_RETENTION_DAYS',
    kind: 'integer',
    min: 1,
    max: limits.maxRetentionDays,
    default: 30,
    doc: 'Items older than this many days move to the archive (first start; then the stored value)',
  },
  storageLimit: {
    env: 'ARCHIVE_STORAGE_LIMIT',
    kind: 'integer',
    min: 0,
    default: 1_099_511_627_776,
    doc: 'Bytes the archive may hold; uploading stops before passing it (read at every start)',
  },
  store: {
    env: 'ARCHIVE_STORE',
    kind: 'enum',
    values: ['fs', 's3'],
    default: 'fs',
    doc: 'Where archived objects go: a directory (fs) or an S3-compatible bucket (s3)',
  },
  dir: {
    env: 'ARCHIVE_DIR',
    kind: 'string',
    default: 'data/archive',
    doc: 'Directory of the fs archive store (created 0700, objects 0600; a start refuses one open to other users)',
  },
  s3Endpoint: {
    env: 'S3_ENDPOINT',
    kind: 'url',
    protocols: ['http', 'https'],
    optional: true,
    doc: 'S3 endpoint (MinIO, R2, B2); unset for AWS S3',
  },
  s3Region: { env: 'S3_REGION', kind: 'string', default: 'us-east-1', doc: 'S3 region' },
  s3Bucket: {
    env: 'S3_BUCKET',
    kind: 'string',
    optional: true,
    doc: 'S3 bucket (required for s3)',
  },
  s3Prefix: {
    env: 'S3_PREFIX',
    kind: 'string',
    default: 'screenfleet-archive',
    doc: 'Key prefix of the archive in the bucket',
  },
  s3AccessKey: {
    env: 'S3_ACCESS_KEY',
    kind: 'string',
    optional: true,
    secret: true,
    doc: "S3 access key id (unset: the SDK's default chain)",
  },
  s3SecretKey: {
    env: 'S3_SECRET_KEY',
    kind: 'string',
    optional: true,
    secret: true,
    doc: 'S3 secret access key',
  },
  s3ForcePathStyle: {
    env: 'S3_FORCE_PATH_STYLE',
    kind: 'boolean',
    default: false,
    doc: 'Bucket in the path, not the host name (MinIO and most self-hosted stores)',
  },
  interval: {
    env: 'ARCHIVE_INTERVAL',
    kind: 'duration',
    default: 300_000,
    doc: 'Time between archive passes',
  },
  chunkSize: {
    env: 'ARCHIVE_CHUNK_SIZE',
    kind: 'integer',
    min: 1,
    max: 10_000,
    default: 500,
    doc: 'Items per archived chunk',
  },
  mediaRoot: {
    env: 'ARCHIVE_MEDIA_ROOT',
    kind: 'string',
    optional: true,
    doc: 'Media files under this directory travel with their items; unset: media are left alone',
  },
  encryptionKeys: {
    env: 'ARCHIVE_ENCRYPTION_KEYS',
    kind: 'list',
    optional: true,
    secret: true,
    doc: 'AES-256-GCM keys, newest first, comma-separated (each 32 bytes: 64 hex digits or base64): the first seals new objects, every one opens the objects sealed with it; unset: objects are not encrypted (README: Archive keys)',
  },
  encryptionKey: {
    env: 'ARCHIVE_ENCRYPTION_KEY',
    kind: 'string',
    optional: true,
    secret: true,
    doc: 'One key, as before key rotation: the same as ARCHIVE_ENCRYPTION_KEYS with one key (set one of the two)',
  },
  allowUnreadable: {
    env: 'ARCHIVE_ALLOW_UNREADABLE',
    kind: 'boolean',
    default: false,
    doc: 'Start although archived objects are sealed with keys none of the configured ones is (their items stay unrestorable and are reported); unset, such a start is refused naming them',
  },
  leaseTtl: {
    env: 'ARCHIVE_LEASE_TTL',
    kind: 'duration',
    default: 30_000,
    doc: 'Lease of the active worker; another takes over this long after it dies',
  },
  auditRetentionDays: {
    env: 'AUDIT_RETENTION_DAYS',
    kind: 'integer',
    min: 1,
    max: 3650,
    default: 90,
    doc: 'Audit rows older than this many days are deleted by the archive worker',
  },
  retryInitial: {
    env: 'ARCHIVE_RETRY_INITIAL',
    kind: 'duration',
    default: 30_000,
    doc: 'Wait after a failed pass; doubles with each failure',
  },
  retryMax: {
    env: 'ARCHIVE_RETRY_MAX',
    kind: 'duration',
    default: 1_800_000,
    doc: 'Longest wait between failed passes',
  },
});

export type ArchiveConfig = Config<typeof archiveConfigSpec>;

/**
 * The configured keys as bytes, newest first: ARCHIVE_ENCRYPTION_KEYS, or the one
 * ARCHIVE_ENCRYPTION_KEY (not both); each 64 hex digits or base64 of exactly 32 bytes. A
 * ConfigError names what is wrong (never the key). The same key twice counts once.
 */
export function parseEncryptionKeys(
  config: Pick<ArchiveConfig, 'encryptionKeys' | 'encryptionKey'>,
): Buffer[] {
  if (config.encryptionKeys !== undefined && config.encryptionKey !== undefined) {
    throw new ConfigError([
      {
        env: 'ARCHIVE_ENCRYPTION_KEY',
        value: '***',
        rule: 'unset it when ARCHIVE_ENCRYPTION_KEYS is set (list it there)',
      },
    ]);
  }
  const [env, texts] =
    config.encryptionKeys !== undefined
      ? ['ARCHIVE_ENCRYPTION_KEYS', config.encryptionKeys]
      : [
          'ARCHIVE_ENCRYPTION_KEY',
          config.encryptionKey === undefined ? [] : [config.encryptionKey],
        ];
  const keys: Buffer[] = [];
  for (const [index, text] of texts.entries()) {
    const key = parseKey(text);
    if (!key) {
      const which = texts.length > 1 ? ` (key ${index + 1} of ${texts.length})` : '';
      throw new ConfigError([
        {
          env,
          value: '***',
          rule: `32 bytes each: 64 hex digits or base64 (openssl rand -hex 32)${which}`,
        },
      ]);
    }
    if (!keys.some((known) => known.equals(key))) keys.push(key);
  }
  return keys;
}

function parseKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)
      ? Buffer.from(trimmed, 'base64')
      : undefined;
  return key?.length === 32 ? key : undefined;
}

/** The archive directory when ARCHIVE_DIR is unset and a data directory is in use. */
export const defaultArchiveDir = (dataDir: string) => path.join(dataDir, 'archive');

/** Rules across variables, in the same one-error shape as loadConfig's. */
export function checkArchiveConfig(
  config: Pick<ArchiveConfig, 'store' | 's3Bucket' | 's3AccessKey' | 's3SecretKey'>,
): void {
  if (config.store === 's3' && !config.s3Bucket) {
    throw new ConfigError([
      { env: 'S3_BUCKET', value: undefined, rule: 'required when ARCHIVE_STORE=s3' },
    ]);
  }
  if (Boolean(config.s3AccessKey) !== Boolean(config.s3SecretKey)) {
    throw new ConfigError([
      { env: 'S3_SECRET_KEY', value: undefined, rule: 'set together with S3_ACCESS_KEY' },
    ]);
  }
}

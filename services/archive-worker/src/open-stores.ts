import path from 'node:path';
import {
  createFilesystemArchiveStore,
  createS3ArchiveStore,
  type ArchiveStore,
} from '@screenfleet/storage';
import type { ArchiveConfig } from './config';

type ArchiveStoreConfig = Pick<
  ArchiveConfig,
  | 'store'
  | 'dir'
  | 's3Endpoint'
  | 's3Region'
  | 's3Bucket'
  | 's3Prefix'
  | 's3ForcePathStyle'
  | 's3AccessKey'
  | 's3SecretKey'
>;

/** The archive store the configuration names, in both modes (start.ts) and for the commands. */
export function openArchiveStore(config: ArchiveStoreConfig): ArchiveStore {
  if (config.store === 'fs')
    return createFilesystemArchiveStore({ root: path.resolve(config.dir) });
  return createS3ArchiveStore({
    ...(config.s3Endpoint ? { endpoint: config.s3Endpoint } : {}),
    region: config.s3Region,
    bucket: config.s3Bucket ?? '',
    prefix: config.s3Prefix,
    forcePathStyle: config.s3ForcePathStyle,
    ...(config.s3AccessKey && config.s3SecretKey
      ? { credentials: { accessKeyId: config.s3AccessKey, secretAccessKey: config.s3SecretKey } }
      : {}),
  });
}

/** Where the archive goes, for the launcher's start lines. */
export function describeArchiveStore(config: ArchiveStoreConfig): string {
  return config.store === 's3'
    ? `s3 bucket ${config.s3Bucket}/${config.s3Prefix}`
    : path.resolve(config.dir);
}

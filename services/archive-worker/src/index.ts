export {
  archiveConfigSpec,
  checkArchiveConfig,
  defaultArchiveDir,
  parseEncryptionKeys,
  type ArchiveConfig,
} from './config';
export { archiveCliConfigSpec } from './entry/cli-stores';
export {
  createArchiver,
  NotVerifiedError,
  type Archiver,
  type ArchiverDeps,
  type PassReport,
  type PassStep,
} from './domain/archive-pass';
export { restoreRange, type RestoreRange, type RestoreReport } from './domain/restore';
export {
  archiveKeyId,
  archiveKeyring,
  ArchiveObjectCorruptError,
  decodeChunk,
  encodeChunk,
  sealOf,
  type ArchiveKeyring,
} from './domain/chunk-codec';
export { openKeysFor } from './domain/archive-keys';
export { chunkKeys } from './domain/manifest';
export { createLocalMediaFiles, createLocalMediaWriter } from './local-media-files';
export { createArchiveWorker, type ArchiveWorker, type ArchiveWorkerDeps } from './archive-worker';
export { archiveWorkerService } from './start';

export type {
  ContentDocument,
  NewContentDocument,
  ContentStore,
  DeletedItems,
  DeleteRange,
  InsertResult,
  StoredOcrResult,
  TimeRange,
  SearchOptions,
  SearchQuery,
  SearchResult,
} from './content-store';
export { summariseDeleted } from './deleted-items';
export {
  HOUR_MS,
  hourStart,
  windowShare,
  type ContentTypeCounters,
  type DeleteOptions,
  type DeviceCounters,
  type DeviceCountersQuery,
  type HourCount,
} from './device-counters';
export {
  backfillSearchTerms,
  type SearchBackfillOptions,
  type SearchBackfillReport,
} from './mongo.search-backfill';
export type { ArchiveObject, ArchiveStore } from './archive-store';
export { ChecksumMismatchError } from './archive-errors';
export { checkArchiveKey } from './archive-key';
export {
  createFilesystemArchiveStore,
  type FilesystemArchiveStoreOptions,
} from './fs.archive-store';
export { createS3ArchiveStore, type S3ArchiveStoreOptions } from './s3.archive-store';
export { createMongoContentStore, type MongoContentStoreOptions } from './mongo.content-store';
export {
  createMongoArchiveStateStore,
  type MongoArchiveStateStoreOptions,
} from './mongo.archive-state-store';
export type { StoreLogger } from './mongo-connection';
export {
  openSqliteConnection,
  openSqliteDatabase,
  type SqliteDatabase,
  type SqliteDatabaseOptions,
} from './sqlite-database';
export type { ReadOptions, SqliteReaders } from './sqlite-readers';
export type { SqliteWriter, WriterLimits } from './sqlite-writer';
export type { CheckpointPassOutcome } from './sqlite-checkpointer';
export { createSqliteContentStore, type SqliteContentStoreOptions } from './sqlite.content-store';
export {
  createSqliteArchiveStateStore,
  type SqliteArchiveStateStoreOptions,
} from './sqlite.archive-state-store';
export {
  classifyStoreError,
  ContentRejectedError,
  isStoreUnreachable,
  type StoreErrorKind,
} from './store-errors';
export type { ArchiveLease, ArchiveLeaseName, ArchiveStateStore } from './archive-state-store';
export {
  createSqliteDeadLetters,
  type DeadLetter,
  type SqliteDeadLetters,
  type SqliteDeadLettersOptions,
} from './sqlite.dead-letters';
export {
  enrolRefusal,
  type EnrolmentCode,
  type EnrolRefusal,
  type EnrolResult,
  type NewEnrolmentCode,
  type RateLimitedRoute,
  type StoredToken,
  type TokenRateLimits,
  type TokenStore,
  type TokenUse,
} from './token-store';
export { createMongoTokenStore, type MongoTokenStoreOptions } from './mongo.token-store';
export { createSqliteTokenStore, type SqliteTokenStoreOptions } from './sqlite.token-store';
export {
  MAX_AUDIT_PAGE,
  type AuditOutcome,
  type AuditPage,
  type AuditQuery,
  type AuditRow,
  type AuditStore,
  type AuditValue,
} from './audit-store';
export { createMongoAuditStore, type MongoAuditStoreOptions } from './mongo.audit-store';
export { createSqliteAuditStore, type SqliteAuditStoreOptions } from './sqlite.audit-store';

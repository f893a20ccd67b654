export type {
  ContentDocument,
  ContentStore,
  InsertResult,
  StoredOcrResult,
  TimeRange,
} from './content-store';
export type { ArchiveObject, ArchiveStore } from './archive-store';
export {
  createMongoContentStore,
  type MongoContentStoreOptions,
  type StoreLogger,
} from './mongo.content-store';
export { isStoreUnreachable } from './store-errors';

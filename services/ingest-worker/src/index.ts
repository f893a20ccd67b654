export { ingestConfigSpec } from './config';
export { toDocuments } from './domain/to-documents';
export { SEARCH_REPLY_MAX_BYTES } from './entry/search.rpc';
export { createIngestWorker, type IngestWorker, type IngestWorkerDeps } from './ingest-worker';
export { ingestWorkerService } from './start';

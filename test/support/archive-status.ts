/**
 * GET /archive/status as ../shared/spec/interface.md gives it, written out here rather than taken
 * from libs/contracts, so the end-to-end tests check the contract against the spec.
 */
export const statusFields = [
  'enabled',
  'retention_days',
  'watermark',
  'last_cleanup',
  'last_error',
  'storage_used',
  'storage_limit',
  'pending_count',
  'is_uploading',
  'chunks_uploaded',
  'media_files_uploaded',
  'media_files_pending',
];

/** Always numbers, never null (screenpipe's settings page crashes on a null). */
export const numberFields = [
  'retention_days',
  'storage_used',
  'storage_limit',
  'pending_count',
  'chunks_uploaded',
  'media_files_uploaded',
  'media_files_pending',
];

export {
  addRequestSchema,
  contentItemSchema,
  contentTypes,
  ocrResultSchema,
  transcriptionSchema,
} from './add-request.schema';
export { contentBatchSchema, envelopeSchema } from './messages.schema';
export {
  clickByIndexRequestSchema,
  pressKeyRequestSchema,
  typeByIndexRequestSchema,
} from './press-key.schema';
export { archiveStatusSchema, errorBodySchema, operationResultSchema } from './results.schema';
export {
  archiveActionResultSchema,
  archiveCommandSchema,
  archiveConfigureRequestSchema,
  archiveInitRequestSchema,
  archiveReplySchema,
  archiveRestoreRequestSchema,
} from './archive.schema';
export {
  searchAnswerSchema,
  searchAudioContentSchema,
  searchOcrContentSchema,
  searchOrders,
  searchReplySchema,
  searchRequestSchema,
  searchAnswerItemSchema,
} from './search.schema';
export { whoAmISchema } from './auth.schema';
export {
  dataDeleteCommandRequestSchema,
  dataDeleteDeviceErrors,
  dataDeleteDeviceRequestSchema,
  dataDeletedCountsSchema,
  dataDeleteRangeErrors,
  dataDeleteRangeRequestSchema,
  dataDeleteResultSchema,
  toDataDeleteRange,
  toDeletedDevice,
  type DataDeleteRange,
} from './data-delete.schema';
export {
  agentStatuses,
  captureStatuses,
  deviceCaptureRecordSchema,
  deviceDetailSchema,
  deviceListingRowSchema,
  deviceSortKeys,
  deviceSummarySchema,
  devicesAnswerSchema,
  devicesReplySchema,
  devicesRequestSchema,
  healthAnswerSchema,
  newestItemTimesSchema,
} from './devices.schema';

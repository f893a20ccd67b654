import type { FromSchema } from 'json-schema-to-ts';
import type {
  addRequestSchema,
  contentItemSchema,
  ocrResultSchema,
  transcriptionSchema,
} from './schemas/add-request.schema';
import type {
  archiveActionResultSchema,
  archiveCommandSchema,
  archiveConfigureRequestSchema,
  archiveInitRequestSchema,
  archiveReplySchema,
  archiveRestoreRequestSchema,
} from './schemas/archive.schema';
import type { whoAmISchema } from './schemas/auth.schema';
import type {
  dataDeleteCommandRequestSchema,
  dataDeleteDeviceRequestSchema,
  dataDeletedCountsSchema,
  dataDeleteRangeRequestSchema,
  dataDeleteResultSchema,
} from './schemas/data-delete.schema';
import type { contentBatchSchema } from './schemas/messages.schema';
import type {
  agentStatuses,
  captureStatuses,
  deviceCaptureRecordSchema,
  deviceDetailSchema,
  deviceListingRowSchema,
  deviceSummarySchema,
  devicesAnswerSchema,
  devicesReplySchema,
  devicesRequestSchema,
  healthAnswerSchema,
  newestItemTimesSchema,
} from './schemas/devices.schema';
import type {
  listedElementSchema,
  listElementsRequestSchema,
  listElementsResponseSchema,
  operatorCommandSchema,
  operatorPresenceSchema,
  operatorResultSchema,
} from './schemas/operator.schema';
import type {
  clickByIndexRequestSchema,
  pressKeyRequestSchema,
  typeByIndexRequestSchema,
} from './schemas/press-key.schema';
import type {
  searchAnswerSchema,
  searchAudioContentSchema,
  searchOcrContentSchema,
  searchReplySchema,
  searchRequestSchema,
  searchAnswerItemSchema,
} from './schemas/search.schema';
import type {
  archiveStatusSchema,
  errorBodySchema,
  operationResultSchema,
} from './schemas/results.schema';

// Types are inferred from the schemas, so they cannot drift from what is validated.
export type AddRequest = FromSchema<typeof addRequestSchema>;
export type ContentItem = FromSchema<typeof contentItemSchema>;
export type OcrResult = FromSchema<typeof ocrResultSchema>;
export type Transcription = FromSchema<typeof transcriptionSchema>;
export type ContentType = AddRequest['content']['content_type'];
export type PressKeyRequest = FromSchema<typeof pressKeyRequestSchema>;
export type OperationResult = FromSchema<typeof operationResultSchema>;
export type ErrorBody = FromSchema<typeof errorBodySchema>;
export type ArchiveStatus = FromSchema<typeof archiveStatusSchema>;
export type ArchiveConfigureRequest = FromSchema<typeof archiveConfigureRequestSchema>;
export type ArchiveInitRequest = FromSchema<typeof archiveInitRequestSchema>;
export type ArchiveRestoreRequest = FromSchema<typeof archiveRestoreRequestSchema>;
export type ArchiveCommand = FromSchema<typeof archiveCommandSchema>;
export type ArchiveReply = FromSchema<typeof archiveReplySchema>;
export type ArchiveActionResult = FromSchema<typeof archiveActionResultSchema>;
export type ContentBatch = FromSchema<typeof contentBatchSchema>;
export type ListElementsRequest = FromSchema<typeof listElementsRequestSchema>;
export type ListElementsResponse = FromSchema<typeof listElementsResponseSchema>;
export type ListedElement = FromSchema<typeof listedElementSchema>;
export type OperatorCommand = FromSchema<typeof operatorCommandSchema>;
export type ListCommand = Extract<OperatorCommand, { action: 'list' }>;
export type PressCommand = Extract<OperatorCommand, { action: 'press' }>;
export type ClickCommand = Extract<OperatorCommand, { action: 'click' }>;
export type TypeCommand = Extract<OperatorCommand, { action: 'type' }>;
export type ClickByIndexRequest = FromSchema<typeof clickByIndexRequestSchema>;
export type TypeByIndexRequest = FromSchema<typeof typeByIndexRequestSchema>;
export type OperatorResult = FromSchema<typeof operatorResultSchema>;
export type OperatorPresence = FromSchema<typeof operatorPresenceSchema>;
export type SearchRequest = FromSchema<typeof searchRequestSchema>;
export type SearchReply = FromSchema<typeof searchReplySchema>;
export type SearchAnswer = FromSchema<typeof searchAnswerSchema>;
export type SearchAnswerItem = FromSchema<typeof searchAnswerItemSchema>;
export type SearchOcrContent = FromSchema<typeof searchOcrContentSchema>;
export type SearchAudioContent = FromSchema<typeof searchAudioContentSchema>;
export type WhoAmI = FromSchema<typeof whoAmISchema>;
export type DataDeleteRangeRequest = FromSchema<typeof dataDeleteRangeRequestSchema>;
export type DataDeleteDeviceRequest = FromSchema<typeof dataDeleteDeviceRequestSchema>;
export type DataDeleteCommandRequest = FromSchema<typeof dataDeleteCommandRequestSchema>;
export type DataDeletedCounts = FromSchema<typeof dataDeletedCountsSchema>;
export type DataDeleteResult = FromSchema<typeof dataDeleteResultSchema>;
export type DevicesRequest = FromSchema<typeof devicesRequestSchema>;
export type DevicesReply = FromSchema<typeof devicesReplySchema>;
export type DeviceCaptureRecord = FromSchema<typeof deviceCaptureRecordSchema>;
export type DeviceListingRow = FromSchema<typeof deviceListingRowSchema>;
export type NewestItemTimes = FromSchema<typeof newestItemTimesSchema>;
export type DeviceSummary = FromSchema<typeof deviceSummarySchema>;
export type DeviceDetail = FromSchema<typeof deviceDetailSchema>;
export type DevicesAnswer = FromSchema<typeof devicesAnswerSchema>;
export type HealthAnswer = FromSchema<typeof healthAnswerSchema>;
export type CaptureStatus = (typeof captureStatuses)[number];
export type AgentStatus = (typeof agentStatuses)[number];

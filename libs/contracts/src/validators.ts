import { compileValidator } from './validate';
import { addRequestSchema } from './schemas/add-request.schema';
import {
  archiveActionResultSchema,
  archiveCommandSchema,
  archiveConfigureRequestSchema,
  archiveInitRequestSchema,
  archiveReplySchema,
  archiveRestoreRangeErrors,
  archiveRestoreRequestSchema,
} from './schemas/archive.schema';
import { whoAmISchema } from './schemas/auth.schema';
import {
  dataDeleteDeviceErrors,
  dataDeleteDeviceRequestSchema,
  dataDeleteRangeErrors,
  dataDeleteRangeRequestSchema,
  dataDeleteResultSchema,
} from './schemas/data-delete.schema';
import { contentBatchSchema, envelopeSchema } from './schemas/messages.schema';
import {
  deviceDetailSchema,
  devicesAnswerSchema,
  devicesReplySchema,
  devicesRequestSchema,
  healthAnswerSchema,
} from './schemas/devices.schema';
import {
  listElementsRequestSchema,
  listElementsResponseSchema,
  operatorCommandSchema,
  operatorPresenceSchema,
  operatorResultSchema,
} from './schemas/operator.schema';
import {
  clickByIndexRequestSchema,
  pressKeyRequestSchema,
  typeByIndexRequestSchema,
} from './schemas/press-key.schema';
import {
  searchAnswerSchema,
  searchReplySchema,
  searchRequestSchema,
} from './schemas/search.schema';
import {
  archiveStatusSchema,
  errorBodySchema,
  operationResultSchema,
} from './schemas/results.schema';
import type { Envelope } from './envelope';
import type {
  AddRequest,
  ArchiveActionResult,
  ArchiveCommand,
  ArchiveConfigureRequest,
  ArchiveInitRequest,
  ArchiveReply,
  ArchiveRestoreRequest,
  ArchiveStatus,
  ContentBatch,
  DeviceDetail,
  DevicesAnswer,
  DevicesReply,
  DevicesRequest,
  ErrorBody,
  HealthAnswer,
  ListElementsRequest,
  ListElementsResponse,
  OperationResult,
  OperatorCommand,
  OperatorPresence,
  OperatorResult,
  PressKeyRequest,
  ClickByIndexRequest,
  DataDeleteDeviceRequest,
  DataDeleteRangeRequest,
  DataDeleteResult,
  TypeByIndexRequest,
  SearchAnswer,
  SearchReply,
  SearchRequest,
  WhoAmI,
} from './types';

/** Compiled once per process; import these rather than compiling schemas again. */
export const validators = {
  addRequest: compileValidator<AddRequest>(addRequestSchema, 'add request'),
  pressKeyRequest: compileValidator<PressKeyRequest>(pressKeyRequestSchema, 'press-key request'),
  clickByIndexRequest: compileValidator<ClickByIndexRequest>(
    clickByIndexRequestSchema,
    'click-by-index request',
  ),
  typeByIndexRequest: compileValidator<TypeByIndexRequest>(
    typeByIndexRequestSchema,
    'type-by-index request',
  ),
  operationResult: compileValidator<OperationResult>(operationResultSchema, 'operation result'),
  errorBody: compileValidator<ErrorBody>(errorBodySchema, 'error body'),
  archiveStatus: compileValidator<ArchiveStatus>(archiveStatusSchema, 'archive status'),
  archiveConfigureRequest: compileValidator<ArchiveConfigureRequest>(
    archiveConfigureRequestSchema,
    'archive configure request',
  ),
  archiveInitRequest: compileValidator<ArchiveInitRequest>(
    archiveInitRequestSchema,
    'archive init request',
  ),
  archiveRestoreRequest: compileValidator<ArchiveRestoreRequest>(
    archiveRestoreRequestSchema,
    'archive restore request',
    (request) => archiveRestoreRangeErrors(request),
  ),
  // The worker checks a command again on arrival, relations included.
  archiveCommand: compileValidator<ArchiveCommand>(
    archiveCommandSchema,
    'archive command',
    (command) =>
      command.action === 'restore'
        ? archiveRestoreRangeErrors(command.request, 'request.')
        : command.action === 'delete'
          ? deleteCommandRangeErrors(command.request)
          : [],
  ),
  archiveReply: compileValidator<ArchiveReply>(archiveReplySchema, 'archive reply'),
  archiveActionResult: compileValidator<ArchiveActionResult>(
    archiveActionResultSchema,
    'archive action result',
  ),
  envelope: compileValidator<Envelope>(envelopeSchema, 'message envelope'),
  contentBatch: compileValidator<ContentBatch>(contentBatchSchema, 'content batch'),
  listElementsRequest: compileValidator<ListElementsRequest>(
    listElementsRequestSchema,
    'list-elements request',
  ),
  listElementsResponse: compileValidator<ListElementsResponse>(
    listElementsResponseSchema,
    'list-elements response',
  ),
  operatorCommand: compileValidator<OperatorCommand>(operatorCommandSchema, 'operator command'),
  operatorResult: compileValidator<OperatorResult>(operatorResultSchema, 'operator result'),
  operatorPresence: compileValidator<OperatorPresence>(operatorPresenceSchema, 'operator presence'),
  searchRequest: compileValidator<SearchRequest>(searchRequestSchema, 'search request'),
  searchReply: compileValidator<SearchReply>(searchReplySchema, 'search reply'),
  searchAnswer: compileValidator<SearchAnswer>(searchAnswerSchema, 'search answer'),
  whoAmI: compileValidator<WhoAmI>(whoAmISchema, 'whoami answer'),
  dataDeleteRangeRequest: compileValidator<DataDeleteRangeRequest>(
    dataDeleteRangeRequestSchema,
    'delete-range request',
    (request) => dataDeleteRangeErrors(request),
  ),
  dataDeleteDeviceRequest: compileValidator<DataDeleteDeviceRequest>(
    dataDeleteDeviceRequestSchema,
    'delete-device request',
    (request) => dataDeleteDeviceErrors(request),
  ),
  dataDeleteResult: compileValidator<DataDeleteResult>(dataDeleteResultSchema, 'delete result'),
  devicesRequest: compileValidator<DevicesRequest>(devicesRequestSchema, 'devices request'),
  devicesReply: compileValidator<DevicesReply>(devicesReplySchema, 'devices reply'),
  devicesAnswer: compileValidator<DevicesAnswer>(devicesAnswerSchema, 'devices answer'),
  deviceDetail: compileValidator<DeviceDetail>(deviceDetailSchema, 'device detail'),
  healthAnswer: compileValidator<HealthAnswer>(healthAnswerSchema, 'health answer'),
};

/** A delete command's bounds, when both are given, must hold something (`to` is exclusive). */
function deleteCommandRangeErrors(request: { from?: string; to?: string }) {
  return request.from !== undefined && request.to !== undefined
    ? archiveRestoreRangeErrors({ from: request.from, to: request.to }, 'request.')
    : [];
}

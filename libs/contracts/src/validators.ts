import { compileValidator } from './validate';
import { addRequestSchema } from './schemas/add-request.schema';
import { contentBatchSchema, envelopeSchema } from './schemas/messages.schema';
import { pressKeyRequestSchema } from './schemas/press-key.schema';
import {
  archiveStatusSchema,
  errorBodySchema,
  operationResultSchema,
} from './schemas/results.schema';
import type { Envelope } from './envelope';
import type {
  AddRequest,
  ArchiveStatus,
  ContentBatch,
  ErrorBody,
  OperationResult,
  PressKeyRequest,
} from './types';

/** Compiled once per process; import these rather than compiling schemas again. */
export const validators = {
  addRequest: compileValidator<AddRequest>(addRequestSchema, 'add request'),
  pressKeyRequest: compileValidator<PressKeyRequest>(pressKeyRequestSchema, 'press-key request'),
  operationResult: compileValidator<OperationResult>(operationResultSchema, 'operation result'),
  errorBody: compileValidator<ErrorBody>(errorBodySchema, 'error body'),
  archiveStatus: compileValidator<ArchiveStatus>(archiveStatusSchema, 'archive status'),
  envelope: compileValidator<Envelope>(envelopeSchema, 'message envelope'),
  contentBatch: compileValidator<ContentBatch>(contentBatchSchema, 'content batch'),
};

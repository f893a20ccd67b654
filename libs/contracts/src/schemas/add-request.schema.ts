import { limits } from '../limits';
import { deviceNameSchema, nullableDateTimeSchema } from './common';

const optionalString = (maxLength: number) => ({ type: ['string', 'null'], maxLength }) as const;

/** Text found by OCR. Only `text` is required; screenpipe clients never send `confidence`. */
export const ocrResultSchema = {
  type: 'object',
  required: ['text'],
  additionalProperties: false,
  properties: {
    text: { type: 'string', maxLength: limits.maxTextLength },
    /** A fraction from 0 (no confidence) to 1 (certain), when the OCR engine gives one. */
    confidence: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    text_json: optionalString(limits.maxTextLength),
    ocr_engine: optionalString(limits.maxEngineLength),
    focused: { type: ['boolean', 'null'] },
  },
} as const;

export const contentItemSchema = {
  type: 'object',
  required: ['file_path'],
  additionalProperties: false,
  properties: {
    file_path: { type: 'string', minLength: 1, maxLength: limits.maxFilePathLength },
    /** Absent or null: the time the gateway received the batch. */
    timestamp: nullableDateTimeSchema,
    app_name: optionalString(limits.maxNameLength),
    window_name: optionalString(limits.maxNameLength),
    ocr_results: {
      type: ['array', 'null'],
      maxItems: limits.maxOcrResultsPerItem,
      items: ocrResultSchema,
    },
    tags: {
      type: ['array', 'null'],
      maxItems: limits.maxTags,
      items: { type: 'string', minLength: 1, maxLength: limits.maxTagLength },
    },
  },
} as const;

/**
 * screenpipe's audio text: content_type "transcription" carries one object, not a list. Ours:
 * an optional `timestamp` (when it was spoken), which screenpipe's shape lacks; with it a
 * transcription has an exact identity (docs/adr/0009).
 */
export const transcriptionSchema = {
  type: 'object',
  required: ['transcription'],
  additionalProperties: false,
  properties: {
    transcription: { type: 'string', maxLength: limits.maxTextLength },
    transcription_engine: optionalString(limits.maxEngineLength),
    /** Absent or null: the time the gateway received the batch. */
    timestamp: nullableDateTimeSchema,
  },
} as const;

/** One branch of `content`: a content type and what it carries in `data`. */
const contentBranch = <const T extends string, const D>(contentType: T, data: D) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['content_type', 'data'],
    properties: { content_type: { const: contentType }, data },
  }) as const;

export const addRequestSchema = {
  type: 'object',
  required: ['device_name', 'content'],
  additionalProperties: false,
  properties: {
    device_name: deviceNameSchema,
    content: {
      type: 'object',
      required: ['content_type', 'data'],
      // Ajv picks the branch by content_type, and a wrong one is refused listing the branches'.
      discriminator: { propertyName: 'content_type' },
      oneOf: [
        contentBranch('frames', {
          type: 'array',
          maxItems: limits.maxItemsPerBatch,
          items: contentItemSchema,
        }),
        contentBranch('transcription', transcriptionSchema),
      ],
    },
  },
} as const;

/** The content types, read from the branches above: they are the one list. */
export const contentTypes = addRequestSchema.properties.content.oneOf.map(
  (branch) => branch.properties.content_type.const,
);

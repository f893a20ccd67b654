/** POST /add: a batch of captured frames or a transcription, and what a stored item may weigh. */
import type { FromSchema } from 'json-schema-to-ts';
import { deviceNameSchema, nullableDateTimeSchema } from '../common.schema';
import { authErrors, bodyErrors, type ApiOperation, type Contract } from '../contract';
import { limits } from '../limits';
import { compileValidator } from '../validate';
import { operationResultSchema } from './common.contract';

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

export type AddRequest = FromSchema<typeof addRequestSchema>;
export type ContentItem = FromSchema<typeof contentItemSchema>;
export type OcrResult = FromSchema<typeof ocrResultSchema>;
export type Transcription = FromSchema<typeof transcriptionSchema>;
export type ContentType = AddRequest['content']['content_type'];

export const addRoute: ApiOperation = {
  method: 'post',
  path: '/add',
  operationId: 'addContent',
  tag: 'ingest',
  summary: 'Push a batch of captured frames or a transcription',
  description:
    'Answers 200 only after RabbitMQ confirmed the batch (durable); a re-sent batch never ' +
    'duplicates an item. A token bound to devices may only push for those (403 otherwise). ' +
    `Body at most ${limits.maxBodyBytes} bytes; an item too large for one broker message is a 413.`,
  scope: 'ingest',
  request: {
    schema: addRequestSchema,
    required: true,
    examples: {
      frames: {
        summary: 'OCR frames',
        value: {
          device_name: 'MacBook Pro',
          content: {
            content_type: 'frames',
            data: [
              {
                file_path: '/data/frames/2026-11-22/10-00-00.mp4',
                timestamp: '2026-11-22T10:00:00.123Z',
                app_name: 'Chromium',
                window_name: 'screenfleet - README',
                ocr_results: [{ text: 'Hello', confidence: 0.97, focused: true }],
                tags: ['work'],
              },
            ],
          },
        },
      },
      transcription: {
        summary: 'An audio transcription',
        value: {
          device_name: 'MacBook Pro',
          content: {
            content_type: 'transcription',
            data: { transcription: 'good morning', transcription_engine: 'whisper' },
          },
        },
      },
    },
  },
  response: {
    schema: operationResultSchema,
    description: 'The batch is durable in the broker.',
    example: { success: true, message: 'accepted 1 items for device MacBook Pro' },
  },
  errors: [...authErrors, ...bodyErrors, 503],
};

// BSON per stored document: field names, type bytes, lengths, _id, dates, nulls (about 270).
const DOCUMENT_OVERHEAD = 512;
// Per OCR result: its array key, the document and five named fields with lengths (about 87).
const OCR_RESULT_OVERHEAD = 96;
// Per tag: its array key, type byte, length and terminator (about 13).
const TAG_OVERHEAD = 16;

const bytes = (value: string | null | undefined) =>
  value == null ? 0 : Buffer.byteLength(value, 'utf8');

/**
 * An upper bound of the BSON size of the document the ingest worker stores for a frames item
 * (services/ingest-worker/src/domain/to-documents.ts): every string in UTF-8 plus a fixed
 * overhead per document, OCR result and tag. Linear in the item, no serialisation.
 */
export function storedItemBytesBound(deviceName: string, item: ContentItem): number {
  let total = DOCUMENT_OVERHEAD + bytes(deviceName) + bytes(item.file_path);
  total += bytes(item.app_name) + bytes(item.window_name);
  for (const result of item.ocr_results ?? []) {
    total += OCR_RESULT_OVERHEAD + bytes(result.text) + bytes(result.text_json);
    total += bytes(result.ocr_engine);
  }
  for (const tag of item.tags ?? []) total += TAG_OVERHEAD + bytes(tag);
  return total;
}

export const addContract = {
  validators: { addRequest: compileValidator<AddRequest>(addRequestSchema, 'add request') },
  components: {
    AddRequest: addRequestSchema,
    ContentItem: contentItemSchema,
    OcrResult: ocrResultSchema,
    Transcription: transcriptionSchema,
  },
  operations: [addRoute],
} satisfies Contract;

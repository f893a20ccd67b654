import type { FromSchema } from 'json-schema-to-ts';
import { dateTimeSchema } from '../common.schema';
import type { Contract } from '../contract';
import { compileValidator } from '../validate';
import { addRequestSchema } from '../http/add.route';

/** Payload of content.batch: the accepted request as sent, plus when the gateway received it. */
export const contentBatchSchema = {
  type: 'object',
  required: ['received_at', 'request'],
  additionalProperties: false,
  properties: {
    received_at: dateTimeSchema,
    request: addRequestSchema,
  },
} as const;

export type ContentBatch = FromSchema<typeof contentBatchSchema>;

/** content.batch on the `capture` exchange (POST /add -> the ingest workers). */
export const contentBatchContract = {
  validators: {
    contentBatch: compileValidator<ContentBatch>(contentBatchSchema, 'content batch'),
  },
  components: {},
  operations: [],
} satisfies Contract;

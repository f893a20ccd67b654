import { messageTypes } from '../envelope';
import { limits } from '../limits';
import { addRequestSchema } from './add-request.schema';
import { dateTimeSchema } from './common';

/** The envelope every bus message carries (payload checked by the message's own schema). */
export const envelopeSchema = {
  type: 'object',
  required: ['message_id', 'correlation_id', 'schema_version', 'type', 'sent_at', 'payload'],
  additionalProperties: false,
  properties: {
    message_id: { type: 'string', minLength: 1, maxLength: limits.maxMessageIdLength },
    correlation_id: { type: 'string', minLength: 1, maxLength: limits.maxMessageIdLength },
    schema_version: { type: 'integer', minimum: 1 },
    type: { enum: messageTypes },
    sent_at: dateTimeSchema,
    payload: {},
  },
} as const;

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

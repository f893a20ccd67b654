import { randomUUID } from 'node:crypto';
import { dateTimeSchema } from '../common.schema';
import type { Contract } from '../contract';
import { limits } from '../limits';
import { compileValidator } from '../validate';

/** Bumped when a payload changes incompatibly; consumers reject versions they do not know. */
export const SCHEMA_VERSION = 1;

export const messageTypes = [
  'content.batch',
  'archive.command',
  'archive.reply',
  'operator.command',
  'operator.result',
  'operator.presence',
  'search.request',
  'search.reply',
  'devices.request',
  'devices.reply',
  'tokens.request',
  'tokens.reply',
  'tokens.changed',
  'audit.record',
  'audit.request',
  'audit.reply',
] as const;

export type MessageType = (typeof messageTypes)[number];

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

/** Every message on the bus: metadata for tracing and dedup around a typed payload. */
export interface Envelope<T = unknown> {
  message_id: string;
  correlation_id: string;
  schema_version: number;
  type: MessageType;
  /** ISO 8601 UTC time the sender built the message. */
  sent_at: string;
  payload: T;
  /** operator.command only: the gateway's Ed25519 signature (base64), see operator-signing.ts. */
  signature?: string;
}

export function createEnvelope<T>(
  type: MessageType,
  payload: T,
  options: { correlationId?: string; now?: Date } = {},
): Envelope<T> {
  const messageId = randomUUID();
  return {
    message_id: messageId,
    correlation_id: options.correlationId ?? messageId,
    schema_version: SCHEMA_VERSION,
    type,
    sent_at: (options.now ?? new Date()).toISOString(),
    payload,
  };
}

export const envelopeContract = {
  validators: { envelope: compileValidator<Envelope>(envelopeSchema, 'message envelope') },
  components: {},
  operations: [],
} satisfies Contract;

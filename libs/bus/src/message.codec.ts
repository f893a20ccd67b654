import type { Envelope } from '@screenfleet/contracts';

// The body both buses carry: the envelope as JSON, under one size bound, and what a message
// carries beside it. The amqp adapter adds what only AMQP has (persistence, reply address,
// expiration); the memory bus keeps the body as a broker would.

/**
 * A message larger than the bus takes: refused before it is sent. Both adapters apply the same
 * limit, so a body the embedded mode accepts is one the broker would accept too.
 */
export class MessageTooLargeError extends Error {
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`the message takes ${bytes} bytes; the broker takes at most ${maxBytes}`);
    this.name = 'MessageTooLargeError';
  }
}

/** The envelope as a message body; one over maxBytes is refused before anything is sent. */
export function encodeEnvelope(envelope: Envelope, maxBytes = Number.POSITIVE_INFINITY): Buffer {
  // JSON.stringify gives undefined for no value at all (a server's missing reply): an empty
  // body, which decodes as no envelope.
  const body = Buffer.from(JSON.stringify(envelope) ?? '');
  if (body.length > maxBytes) throw new MessageTooLargeError(body.length, maxBytes);
  return body;
}

/** What a message carries beside its body: its format, and the envelope's metadata for tooling. */
export interface MessageProperties {
  contentType: 'application/json';
  messageId: string;
  correlationId: string;
  type: string;
  /** Whole seconds (as AMQP timestamps are); the envelope keeps the precise time. */
  timestamp?: number;
}

export function messageProperties(envelope: Envelope): MessageProperties {
  const sentAt = Date.parse(envelope.sent_at);
  return {
    contentType: 'application/json',
    messageId: envelope.message_id,
    correlationId: envelope.correlation_id,
    type: envelope.type,
    ...(Number.isNaN(sentAt) ? {} : { timestamp: Math.floor(sentAt / 1000) }),
  };
}

/** The envelope in a message body, or undefined when it is not one (poison). */
export function decodeEnvelope(body: Buffer): Envelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  return isEnvelope(value) ? value : undefined;
}

/**
 * The envelope in a body this process encoded from an Envelope itself (the in-process bus): a
 * fresh copy, as if it crossed a broker, read without checks.
 */
export function readOwnEnvelope(body: Buffer): Envelope {
  return JSON.parse(body.toString('utf8')) as Envelope;
}

function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.message_id === 'string' &&
    typeof candidate.correlation_id === 'string' &&
    typeof candidate.schema_version === 'number' &&
    typeof candidate.type === 'string' &&
    typeof candidate.sent_at === 'string' &&
    'payload' in candidate
  );
}

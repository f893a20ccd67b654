import type { Options } from 'amqplib';
import type { Envelope } from '@screenfleet/contracts';

/** Body and AMQP properties of an envelope: JSON, persistent, metadata mirrored for tooling. */
export function encodeEnvelope(
  envelope: Envelope,
  extra: Options.Publish = {},
): [Buffer, Options.Publish] {
  const sentAt = Date.parse(envelope.sent_at);
  const properties: Options.Publish = {
    contentType: 'application/json',
    persistent: true,
    messageId: envelope.message_id,
    correlationId: envelope.correlation_id,
    type: envelope.type,
    // AMQP timestamps are whole seconds; the envelope keeps the precise time.
    ...(Number.isNaN(sentAt) ? {} : { timestamp: Math.floor(sentAt / 1000) }),
    ...extra,
  };
  return [Buffer.from(JSON.stringify(envelope)), properties];
}

/** The envelope in a message body, or undefined when it is not one (poison). */
export function decodeEnvelope(content: Buffer): Envelope | undefined {
  let body: unknown;
  try {
    body = JSON.parse(content.toString('utf8'));
  } catch {
    return undefined;
  }
  return isEnvelope(body) ? body : undefined;
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

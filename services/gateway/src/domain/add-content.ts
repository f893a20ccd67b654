import {
  createEnvelope,
  exchangeNames,
  OutcomeUnknownError,
  routingKeys,
  sizeLimits,
  storedItemBytesBound,
  TooLargeError,
  ValidationError,
  type AddRequest,
  type ContentBatch,
  type ContentItem,
  type OperationResult,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';

export interface AcceptedBatch {
  result: OperationResult;
  items: number;
  /** Broker messages the batch was carried in. */
  messages: number;
}

// What a content.batch envelope adds around its items: envelope fields, received_at, the
// request's device name and content type, JSON punctuation (device names are at most 256
// characters, 1 KiB of UTF-8; the rest is under 512 bytes).
const ENVELOPE_BYTES = 2048;

/**
 * Hands an accepted batch to the broker. Resolves only once the broker confirmed every message,
 * so a 200 means the batch is durable; the worker fills absent timestamps from received_at,
 * which travels with each message and so survives redelivery. A frames batch larger than
 * sizeLimits.targetMessageBytes is split into several messages (every item keeps its
 * deterministic id, so a retry after a partial failure stores nothing twice). Refused before
 * anything is published: an item whose stored document would pass MongoDB's limit (400) and an
 * item too large for one broker message (413).
 */
export async function addContent(
  bus: Pick<Bus, 'publish'>,
  request: AddRequest,
  context: { receivedAt: Date; requestId: string },
): Promise<AcceptedBatch> {
  const receivedAt = context.receivedAt.toISOString();
  const { content } = request;
  const requests: AddRequest[] =
    content.content_type === 'frames'
      ? splitItems(request.device_name, content.data).map((data) => ({
          ...request,
          content: { ...content, data },
        }))
      : [request];
  const published = await Promise.allSettled(
    requests.map((part) => {
      const payload: ContentBatch = { received_at: receivedAt, request: part };
      const envelope = createEnvelope('content.batch', payload, {
        correlationId: context.requestId,
      });
      return bus.publish(
        exchangeNames.capture,
        routingKeys.contentBatch(content.content_type),
        envelope,
      );
    }),
  );
  const failures = published.flatMap((outcome) =>
    outcome.status === 'rejected' ? [outcome.reason as unknown] : [],
  );
  if (failures.length > 0) throw batchFailure(failures, failures.length < published.length);

  const items = Array.isArray(content.data) ? content.data.length : 1;
  const noun = items === 1 ? 'item' : 'items';
  return {
    items,
    messages: requests.length,
    result: {
      success: true,
      message: `accepted ${items} ${noun} for device ${request.device_name}`,
    },
  };
}

/**
 * What a failed publish tells the client. A 503 must mean that nothing was stored (a retry is
 * then a plain second try), so a batch of which any part was stored, or may have been, is
 * "outcome unknown" instead. Re-sending it is safe all the same: every item keeps its id.
 */
function batchFailure(failures: unknown[], somePartStored: boolean): unknown {
  const unknown = failures.find((error) => error instanceof OutcomeUnknownError);
  if (!somePartStored && !unknown) return failures[0];
  const why = unknown instanceof Error ? unknown.message : 'some of its parts were stored';
  return new OutcomeUnknownError(
    `the batch may be stored in part or in whole (${why}); send it again: an item already stored is never stored twice`,
    { cause: unknown ?? failures[0] },
  );
}

/** Groups items, in order, into parts of about targetMessageBytes; checks every item's size. */
function splitItems(device: string, items: ContentItem[]): ContentItem[][] {
  const parts: ContentItem[][] = [];
  let part: ContentItem[] = [];
  let partBytes = ENVELOPE_BYTES;
  items.forEach((item, index) => {
    const stored = storedItemBytesBound(device, item);
    if (stored > sizeLimits.maxStoredDocumentBytes) {
      throw new ValidationError('an item is too large to be stored', [
        {
          path: `content.data[${index}]`,
          rule: 'maxStoredBytes',
          detail: `the stored item would take up to ${stored} bytes; the store holds at most ${sizeLimits.maxStoredDocumentBytes} per item`,
        },
      ]);
    }
    // JSON of the item as the envelope will carry it (+1 for the separating comma).
    const itemBytes = Buffer.byteLength(JSON.stringify(item), 'utf8') + 1;
    if (ENVELOPE_BYTES + itemBytes > sizeLimits.maxMessageBytes) {
      throw new TooLargeError('an item is too large to be carried', [
        {
          path: `content.data[${index}]`,
          rule: 'maxMessageBytes',
          detail: `the item takes ${itemBytes} bytes; one item may take at most ${sizeLimits.maxMessageBytes - ENVELOPE_BYTES}`,
        },
      ]);
    }
    if (part.length > 0 && partBytes + itemBytes > sizeLimits.targetMessageBytes) {
      parts.push(part);
      part = [];
      partBytes = ENVELOPE_BYTES;
    }
    part.push(item);
    partBytes += itemBytes;
  });
  if (part.length > 0 || parts.length === 0) parts.push(part);
  return parts;
}

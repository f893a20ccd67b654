import {
  createEnvelope,
  exchangeNames,
  routingKeys,
  type AddRequest,
  type ContentBatch,
  type OperationResult,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';

export interface AcceptedBatch {
  result: OperationResult;
  items: number;
}

/**
 * Hands an accepted batch to the broker as one persistent message. Resolves only once the
 * broker confirmed it, so a 200 means the batch is durable; the worker fills absent timestamps
 * from received_at, which travels with the message and so survives redelivery.
 */
export async function addContent(
  bus: Pick<Bus, 'publish'>,
  request: AddRequest,
  context: { receivedAt: Date; requestId: string },
): Promise<AcceptedBatch> {
  const payload: ContentBatch = { received_at: context.receivedAt.toISOString(), request };
  const envelope = createEnvelope('content.batch', payload, { correlationId: context.requestId });
  await bus.publish(
    exchangeNames.capture,
    routingKeys.contentBatch(request.content.content_type),
    envelope,
  );
  const items = Array.isArray(request.content.data) ? request.content.data.length : 1;
  const noun = items === 1 ? 'item' : 'items';
  return {
    items,
    result: {
      success: true,
      message: `accepted ${items} ${noun} for device ${request.device_name}`,
    },
  };
}

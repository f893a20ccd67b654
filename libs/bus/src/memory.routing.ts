import type { ExchangeSpec } from '@screenfleet/contracts';
import { topicMatches } from './topic-pattern';

/** Whether a binding of an exchange of this type takes a message with this routing key. */
export function bindingMatches(
  type: ExchangeSpec['type'],
  pattern: string,
  routingKey: string,
): boolean {
  switch (type) {
    case 'fanout':
      return true;
    case 'direct':
      return pattern === routingKey;
    case 'topic':
      return topicMatches(pattern, routingKey);
  }
}

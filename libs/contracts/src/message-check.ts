import { SCHEMA_VERSION, type Envelope, type MessageType } from './messages/envelope';
import type { FieldError } from './errors';
import type { Validator } from './validate';

/**
 * What is wrong with a message a worker took: another type or schema version (one error, the
 * payload is not read), or its payload's schema errors. Empty when it is what it says it is.
 */
export function checkMessage<T>(
  envelope: Envelope<unknown>,
  type: MessageType,
  payload: Validator<T>,
): FieldError[] {
  if (envelope.type !== type || envelope.schema_version !== SCHEMA_VERSION) {
    const article = /^[aeiou]/.test(type) ? 'an' : 'a';
    return [{ path: 'type', rule: 'const', detail: `not ${article} ${type} v${SCHEMA_VERSION}` }];
  }
  return payload.check(envelope.payload);
}

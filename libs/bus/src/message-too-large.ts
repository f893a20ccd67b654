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

/**
 * Sizes beyond the request limits: what the broker and the store can hold. The gateway refuses
 * a batch that could not be carried or stored, before it answers 200 (libs/contracts/README.md).
 */
export const sizeLimits = {
  /**
   * Largest message body the gateway publishes: under RabbitMQ 4's default max_message_size
   * (16 MiB; a larger message closes the publishing channel and fails every publish in flight),
   * with room for the AMQP frame and properties.
   */
  maxMessageBytes: 16 * 1024 * 1024 - 64 * 1024,
  /** A batch's items are split into messages of about this size (smaller bounds the worker's memory). */
  targetMessageBytes: 1024 * 1024,
  /** MongoDB's document limit (maxBsonObjectSize); the driver refuses a document of this size. */
  maxStoredDocumentBytes: 16 * 1024 * 1024 - 1,
} as const;

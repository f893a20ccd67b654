/**
 * The branch of an RPC reply (search, devices, archive) in which the worker gives no answer:
 * why, as one of the reply's codes, and a message for the caller's log.
 */
export const refusedReply = <const Codes extends readonly string[]>(codes: Codes) =>
  ({
    type: 'object',
    required: ['outcome', 'code', 'message'],
    additionalProperties: false,
    properties: {
      outcome: { const: 'refused' },
      code: { enum: codes },
      message: { type: 'string' },
    },
  }) as const;

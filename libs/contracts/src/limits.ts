/**
 * Limits the spec leaves open (interface.md §8), decided for a service that takes high-volume
 * capture batches: generous for real screens, bounded so one request cannot exhaust a process.
 * The schemas use these numbers; libs/contracts/README.md tabulates them.
 */
export const limits = {
  /** Whole request body, enforced by the gateway before parsing (413 beyond). */
  maxBodyBytes: 16 * 1024 * 1024,
  maxItemsPerBatch: 1000,
  /**
   * Any array or object in a request body, known field or not: checked on the raw bytes before
   * JSON.parse (json-scan.ts), so a huge array is refused before it costs seconds to parse. At
   * least every schema's largest maxItems.
   */
  maxArrayItemsAnywhere: 1000,
  maxObjectKeysAnywhere: 1000,
  /** Nesting of arrays and objects, same check; the schemas need 6 levels. */
  maxJsonDepth: 1000,
  /**
   * In UTF-8 bytes: a device name is the routing key of its operator commands, which AMQP caps
   * at 255 bytes; 200 leaves room for a prefix. 100 x "é" fits, 101 do not.
   */
  maxDeviceNameBytes: 200,
  maxFilePathLength: 4096,
  maxNameLength: 1024,
  maxOcrResultsPerItem: 1000,
  maxTextLength: 1_000_000,
  maxEngineLength: 128,
  maxTags: 100,
  maxTagLength: 256,
  maxElementIndex: 100_000,
  maxModifiers: 4,
  maxKeyLength: 64,
  /** Elements one listing answers at most (its max_elements). */
  maxListedElements: 1000,
  /**
   * Characters (code points) one type-by-index types: the agent types them as key presses and
   * reads the element's value back within the command's budget; Chromium takes 1-4 ms a key.
   */
  maxTypeTextLength: 500,
  /** A listing's cache_id (the agent makes UUIDs). */
  maxCacheIdLength: 64,
  /** A token id as operator commands carry it (requested_by). */
  maxTokenIdLength: 200,
  /** A message's and a correlation id; the gateway passes X-Request-Id on as a correlation id. */
  maxMessageIdLength: 128,
  /** The archive's retention: a hundred years. */
  maxRetentionDays: 36_500,
  /** Archived objects a restore's answer names that it could not read (the count says all). */
  maxUnreadableListed: 100,
  /** GET /search: results per page when `limit` is absent (screenpipe's default). */
  searchDefaultLimit: 20,
  /**
   * GET /search: a larger `limit` is answered with this many (pagination.limit says so), so a
   * client paging by `offset += data.length` still reads everything; one page's reply must fit
   * one broker message.
   */
  maxSearchLimit: 1000,
  /**
   * GET /search: a page holds items while their stored documents total less than this, at least
   * one item (so a page always moves on), then ends early: pagination.limit says how many it
   * holds. What one search reads and answers is bounded by bytes, not only by count (150 items of
   * 1 MB text made one page read 150 MB and hold the process for 25 s).
   */
  searchPageMaxBytes: 4 * 1024 * 1024,
  /**
   * GET /search: `offset`, `min_length`, `max_length` and `max_content_length` at most this:
   * past any real store, and an integer every store's driver takes as it is.
   */
  maxSearchInteger: 1_000_000_000,
  /** GET /search: characters of `q`; longer is a 400 (no client sends sentences this long). */
  maxSearchQueryLength: 1024,
} as const;

import {
  createEnvelope,
  limits,
  StoreUnavailableError,
  TimeoutError,
  type Envelope,
  type SearchReply,
  type SearchRequest,
} from '@screenfleet/contracts';
import { createLogger, createMetrics, type Registry } from '@screenfleet/runtime';
import type {
  ContentDocument,
  SearchOptions,
  SearchQuery,
  SearchResult,
} from '@screenfleet/storage';
import { createIngestMetrics } from '../metrics';
import { createSearchRpcHandler, toStoreQuery } from './search.rpc';

// The store is a fake: this is the translation of search.request into the store's query and
// of its page (or its failure) into the reply.
const request: SearchRequest = {
  q: 'Quarterly',
  content_types: ['frames'],
  devices: ['desk-1'],
  order: 'newest',
  limit: 2,
  offset: 0,
};

const doc: ContentDocument = {
  _id: '2t-one',
  device_name: 'desk-1',
  content_type: 'frames',
  timestamp: new Date('2026-11-22T10:00:00Z'),
  timestamp_source: 'client',
  received_at: new Date('2026-11-22T10:00:00Z'),
  file_path: '/a.mp4',
  app_name: null,
  window_name: null,
  ocr_results: [
    {
      text: 'quarterly report',
      confidence: null,
      text_json: null,
      ocr_engine: null,
      focused: null,
    },
  ],
  tags: [],
  transcription: null,
};

function handlerWith(
  search: (query: SearchQuery, options?: SearchOptions) => Promise<SearchResult>,
) {
  const registry: Registry = createMetrics();
  const handle = createSearchRpcHandler({
    store: { search },
    metrics: createIngestMetrics(registry, () => Promise.resolve(0)),
    logger: createLogger({ service: 'test', level: 'silent' }),
  });
  const outcomes = async (): Promise<Record<string, number>> => {
    const metric = await registry.getSingleMetric('ingest_search_requests_total')?.get();
    return Object.fromEntries(
      (metric?.values ?? []).map((v) => [String(v.labels.outcome), v.value]),
    );
  };
  return { handle, outcomes };
}

const send = (
  payload: unknown,
  type: 'search.request' | 'archive.command' = 'search.request',
): Envelope<unknown> => createEnvelope(type, payload, { correlationId: 'req-1' });

describe('search.rpc handler', () => {
  it('when a valid request arrives, then the store is asked for its terms and the reply is the answer', async () => {
    const queries: SearchQuery[] = [];
    const { handle, outcomes } = handlerWith((query) => {
      queries.push(query);
      return Promise.resolve({ items: [doc, { ...doc, _id: '2t-two' }], total: 5 });
    });
    const reply: Envelope<SearchReply> = await handle(send(request));
    expect(reply.type).toBe('search.reply');
    expect(reply.correlation_id).toBe('req-1');
    expect(queries).toEqual([
      {
        terms: ['quarterly'],
        contentTypes: ['frames'],
        devices: ['desk-1'],
        order: 'newest',
        limit: 2,
        offset: 0,
      },
    ]);
    expect(reply.payload).toMatchObject({
      outcome: 'ok',
      answer: {
        data: [
          { type: 'OCR', content: { frame_id: '2t-one', text: 'quarterly report' } },
          { type: 'OCR', content: { frame_id: '2t-two' } },
        ],
        pagination: { limit: 2, offset: 0, total: 5 },
      },
    });
    expect(await outcomes()).toEqual({
      ok: 1,
      validation_failed: 0,
      store_unavailable: 0,
      deadline_exceeded: 0,
      failed: 0,
    });
  });

  it.each([
    ['a payload breaking the contract', send({ ...request, limit: 0 })],
    ['another message type', send(request, 'archive.command')],
  ])(
    'when %s arrives, then it is refused as validation_failed and the store is not asked',
    async (_, message) => {
      const { handle, outcomes } = handlerWith(() => Promise.reject(new Error('not to be called')));
      const reply = await handle(message);
      expect(reply.payload).toMatchObject({ outcome: 'refused', code: 'validation_failed' });
      expect((await outcomes()).validation_failed).toBe(1);
    },
  );

  it('when the store is unreachable, then the reply says store_unavailable (the gateway answers 503)', async () => {
    const { handle, outcomes } = handlerWith(() =>
      Promise.reject(new StoreUnavailableError('content store unavailable: connection refused')),
    );
    expect((await handle(send(request))).payload).toEqual({
      outcome: 'refused',
      code: 'store_unavailable',
      message: 'content store unavailable: connection refused',
    });
    expect((await outcomes()).store_unavailable).toBe(1);
  });

  it('when the request carries a budget, then the store gets it as its timeout, and a search it stopped is answered deadline_exceeded', async () => {
    const budgets: Array<SearchOptions | undefined> = [];
    const { handle, outcomes } = handlerWith((_query, options) => {
      budgets.push(options);
      return Promise.reject(new TimeoutError('the search ran past its deadline (250 ms)'));
    });
    expect((await handle(send({ ...request, budget_ms: 250 }))).payload).toEqual({
      outcome: 'refused',
      code: 'deadline_exceeded',
      message: 'the search ran past its deadline (250 ms)',
    });
    expect(budgets).toEqual([{ maxBytes: limits.searchPageMaxBytes, timeoutMs: 250 }]);
    expect((await outcomes()).deadline_exceeded).toBe(1);
  });

  it('when the store answers only after the budget has passed, then the reply is deadline_exceeded, not a late page', async () => {
    const { handle } = handlerWith(
      () => new Promise((resolve) => setTimeout(() => resolve({ items: [doc], total: 1 }), 60)),
    );
    expect((await handle(send({ ...request, budget_ms: 20 }))).payload).toMatchObject({
      outcome: 'refused',
      code: 'deadline_exceeded',
    });
  });

  it("when the store fails otherwise, then the reply says failed without the driver's message", async () => {
    const { handle, outcomes } = handlerWith(() =>
      Promise.reject(new Error('E11000 secret collection detail')),
    );
    const reply = await handle(send(request));
    expect(reply.payload).toMatchObject({ outcome: 'refused', code: 'failed' });
    expect(JSON.stringify(reply.payload)).not.toContain('secret');
    expect((await outcomes()).failed).toBe(1);
  });
});

describe('toStoreQuery', () => {
  it('when a resolved request arrives, then the store gets its terms, dates and filters', () => {
    expect(
      toStoreQuery({
        q: 'Café  RÉSUMÉ, café',
        content_types: ['frames'],
        from: '2026-11-22T00:00:00.000Z',
        to: '2026-11-23T00:00:00.000Z',
        devices: ['desk-1'],
        app_name: 'Chromium',
        window_name: 'Docs',
        min_length: 1,
        max_length: 10,
        max_content_length: 5,
        order: 'relevance',
        limit: 7,
        offset: 14,
      }),
    ).toEqual({
      terms: ['cafe', 'resume'],
      contentTypes: ['frames'],
      from: new Date('2026-11-22T00:00:00.000Z'),
      to: new Date('2026-11-23T00:00:00.000Z'),
      devices: ['desk-1'],
      appName: 'Chromium',
      windowName: 'Docs',
      minLength: 1,
      maxLength: 10,
      order: 'relevance',
      limit: 7,
      offset: 14,
    });
  });

  it('when filters are absent, then the store query has none (no text filter for an empty q)', () => {
    expect(
      toStoreQuery({
        q: '',
        content_types: ['frames', 'transcription'],
        order: 'newest',
        limit: 20,
        offset: 0,
      }),
    ).toEqual({
      terms: [],
      contentTypes: ['frames', 'transcription'],
      order: 'newest',
      limit: 20,
      offset: 0,
    });
  });
});

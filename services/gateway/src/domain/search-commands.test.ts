import {
  AppError,
  BrokerUnavailableError,
  createEnvelope,
  parseSearchQuery,
  searchTimings,
  TimeoutError,
  type Envelope,
  type SearchAnswer,
  type SearchRequest,
} from '@screenfleet/contracts';
import { createMetrics, type Registry } from '@screenfleet/runtime';
import { toHttpFailure } from '../entry/http-errors';
import { createGatewayMetrics } from '../metrics';
import { emptyAnswer, sendSearch, toSearchRequest } from './search-commands';
import { countedCall } from './worker-call';

/** The bus's side is covered end to end (test/search.int.test.ts); this is the mapping. */
const now = new Date('2026-11-22T12:00:00Z');
const request: SearchRequest = {
  q: 'x',
  content_types: ['frames'],
  order: 'newest',
  limit: 20,
  offset: 0,
};
const answer: SearchAnswer = { data: [], pagination: { limit: 20, offset: 0, total: 0 } };

function withBus(
  call: (
    queue: string,
    request: Envelope,
    options: { timeoutMs: number; expirationMs?: number },
  ) => Promise<Envelope>,
) {
  const registry: Registry = createMetrics();
  const metrics = createGatewayMetrics(registry).search;
  const bus = {
    call: <Res>(
      queue: string,
      envelope: Envelope,
      options: { timeoutMs: number; expirationMs?: number },
    ) => call(queue, envelope, options) as Promise<Envelope<Res>>,
  };
  const send = () =>
    countedCall(metrics, {}, () =>
      sendSearch(bus, request, { timeoutMs: 1500, requestId: 'req-1' }),
    );
  const results = async () =>
    ((await registry.getSingleMetric('gateway_search_rpc_total')?.get())?.values ?? []).map(
      (v) => `${String(v.labels.result)}=${v.value}`,
    );
  return { send, results };
}

async function failureOf(send: () => Promise<unknown>) {
  try {
    await send();
  } catch (error) {
    return toHttpFailure(error);
  }
  throw new Error('expected a failure');
}

describe('toSearchRequest', () => {
  it('when a query is parsed, then the request carries it resolved: ISO times, devices, filters', () => {
    const parameters = parseSearchQuery(
      {
        q: 'report',
        content_type: 'ocr',
        start_time: '2h ago',
        end_time: 'now',
        app_name: 'Chromium',
        max_content_length: '100',
        order: 'relevance',
        limit: '5000',
        offset: '10',
      },
      now,
    );
    expect(toSearchRequest(parameters, ['desk-1'])).toEqual({
      q: 'report',
      content_types: ['frames'],
      from: '2026-11-22T10:00:00.000Z',
      to: '2026-11-22T12:00:00.000Z',
      devices: ['desk-1'],
      app_name: 'Chromium',
      max_content_length: 100,
      order: 'relevance',
      limit: 1000,
      offset: 10,
    });
  });

  it('when only types we never store are asked for, or the token has no device, then there is nothing to ask', () => {
    expect(toSearchRequest(parseSearchQuery({ content_type: 'ui' }, now), undefined)).toBe(
      undefined,
    );
    expect(toSearchRequest(parseSearchQuery({}, now), [])).toBe(undefined);
    expect(emptyAnswer({ limit: 7, offset: 3 })).toEqual({
      data: [],
      pagination: { limit: 7, offset: 3, total: 0 },
    });
  });
});

describe('sendSearch: what the ingest workers answer', () => {
  it('when a worker answers, then the answer is relayed and the request went to search.rpc, correlated, with the time it may run', async () => {
    const sent: Array<[string, Envelope, { timeoutMs: number; expirationMs?: number }]> = [];
    const { send, results } = withBus((queue, envelope, options) => {
      sent.push([queue, envelope, options]);
      return Promise.resolve(createEnvelope('search.reply', { outcome: 'ok', answer }));
    });
    expect(await send()).toEqual(answer);
    // 1500 ms: 300 to be taken from the queue, 1000 to run, 200 for the answer to come back.
    const timings = searchTimings(1500);
    expect(timings).toEqual({ expirationMs: 300, budgetMs: 1000, graceMs: 200 });
    expect(sent).toEqual([
      [
        'search.rpc.v2',
        expect.objectContaining({
          type: 'search.request',
          correlation_id: 'req-1',
          payload: { ...request, budget_ms: timings.budgetMs },
        }),
        { timeoutMs: 1500, expirationMs: timings.expirationMs },
      ],
    ]);
    expect(await results()).toEqual(['ok=1']);
  });

  it('when the worker says its store stopped the search at the deadline, then 503 with Retry-After saying so', async () => {
    const { send, results } = withBus(() =>
      Promise.resolve(
        createEnvelope('search.reply', {
          outcome: 'refused',
          code: 'deadline_exceeded',
          message: 'the search ran past its deadline (1050 ms) and was stopped',
        }),
      ),
    );
    const failure = await failureOf(send);
    expect(failure).toMatchObject({
      status: 503,
      reason: 'deadline_exceeded',
      headers: { 'Retry-After': '5' },
    });
    expect(failure.body.message).toMatch(/stopped at its deadline: the search ran past/);
    expect(await results()).toEqual(['deadline_exceeded=1']);
  });

  it('when no worker answers in time, then 503 with Retry-After saying an ingest worker is needed', async () => {
    const { send, results } = withBus(() => Promise.reject(new TimeoutError('no reply')));
    const failure = await failureOf(send);
    expect(failure).toMatchObject({
      status: 503,
      reason: 'worker_unavailable',
      headers: { 'Retry-After': '5' },
    });
    expect(failure.body.message).toBe(
      'no answer from an ingest worker within 1500 ms (is one running?)',
    );
    expect(await results()).toEqual(['worker_unavailable=1']);
  });

  it('when the broker is down, then 503 (broker_unavailable)', async () => {
    const { send } = withBus(() => Promise.reject(new BrokerUnavailableError('connection lost')));
    expect(await failureOf(send)).toMatchObject({ status: 503, reason: 'broker_unavailable' });
  });

  it('when the worker says its store is unavailable, then 503 with Retry-After', async () => {
    const { send, results } = withBus(() =>
      Promise.resolve(
        createEnvelope('search.reply', {
          outcome: 'refused',
          code: 'store_unavailable',
          message: 'connection refused',
        }),
      ),
    );
    const failure = await failureOf(send);
    expect(failure).toMatchObject({ status: 503, headers: { 'Retry-After': '5' } });
    expect(failure.body.message).toBe('the content store is unavailable: connection refused');
    expect(await results()).toEqual(['store_unavailable=1']);
  });

  it('when the worker refuses the request as invalid (a version mismatch), then 502, not the client’s 400', async () => {
    const { send } = withBus(() =>
      Promise.resolve(
        createEnvelope('search.reply', {
          outcome: 'refused',
          code: 'validation_failed',
          message: 'not a search.request v1',
        }),
      ),
    );
    expect(await failureOf(send)).toMatchObject({ status: 502, reason: 'bad_gateway' });
  });

  it('when the search failed in the worker, then 500', async () => {
    const { send } = withBus(() =>
      Promise.resolve(
        createEnvelope('search.reply', { outcome: 'refused', code: 'failed', message: 'failed' }),
      ),
    );
    expect(await failureOf(send)).toMatchObject({ status: 500, reason: 'operation_failed' });
  });

  it.each([
    [
      'an answer missing its pagination',
      createEnvelope('search.reply', { outcome: 'ok', answer: { data: [] } }),
    ],
    ['another message type', createEnvelope('archive.reply', { outcome: 'ok', answer })],
  ])('when the reply is %s, then 502 naming why', async (_, reply) => {
    const { send, results } = withBus(() => Promise.resolve(reply));
    const failure = await failureOf(send);
    expect(failure).toMatchObject({ status: 502, reason: 'bad_gateway' });
    expect(await results()).toEqual(['bad_gateway=1']);
  });

  it('when the reply is not an envelope at all, then 502', async () => {
    const { send } = withBus(() =>
      Promise.reject(new AppError('operation_failed', 'the reply is not a valid envelope')),
    );
    expect(await failureOf(send)).toMatchObject({ status: 502 });
  });
});

/**
 * GET /search end to end in both modes (ARCHITECTURE.md: "Both modes pass the same end-to-end
 * tests"): content posted through POST /add is read back through GET /search, relayed by the
 * gateway over search.rpc to the ingest workers (RabbitMQ + FerretDB) or the in-process bus
 * (SQLite). The store's matching rules are the storage contract suite's; this is the route:
 * fields, filters, paging, tokens, screenpipe's clients, and the workers being gone.
 */
import http from 'node:http';
import { validators, type SearchAnswer } from '@screenfleet/contracts';
import type { ContentDocument } from '@screenfleet/storage';
import { waitUntil } from '../services/archive-worker/test/support';
import { buildItem } from './support/content';
import { post, tokens } from './support/gateway';
import { modes, startSystem, type RunningSystem } from './support/system';

const ocrFields = [
  'frame_id',
  'text',
  'timestamp',
  'file_path',
  'offset_index',
  'app_name',
  'window_name',
  'tags',
  'frame',
  'frame_name',
  'browser_url',
  'focused',
  'device_name',
];
const audioFields = [
  'chunk_id',
  'transcription',
  'timestamp',
  'file_path',
  'offset_index',
  'tags',
  'device_name',
  'device_type',
  'speaker',
  'start_time',
  'end_time',
];

/** Frames of the fixture: two devices, known texts, apps, windows and times. */
const frames = {
  'desk-1': [
    {
      file_path: '/captures/desk-1/a.mp4',
      timestamp: '2026-11-20T10:00:00Z',
      app_name: 'Chromium',
      window_name: 'Quarterly Report - Docs',
      ocr_results: [{ text: 'Quarterly report draft', focused: true }, { text: 'Revenue café' }],
      tags: ['work'],
    },
    {
      file_path: '/captures/desk-1/b.mp4',
      timestamp: '2026-11-20T19:00:00+08:00', // 11:00 UTC
      app_name: 'Code',
      window_name: 'main.ts - screenfleet',
      ocr_results: [{ text: 'function deploy return' }],
    },
    {
      file_path: '/captures/desk-1/c.mp4',
      timestamp: '2026-11-20T12:00:00.250Z',
      app_name: 'Chromium',
      window_name: 'Inbox',
      ocr_results: [{ text: 'meeting invoice' }],
    },
  ],
  'desk-2': [
    {
      file_path: '/captures/desk-2/a.mp4',
      timestamp: '2026-11-20T10:30:00Z',
      app_name: 'Slack',
      window_name: 'general',
      ocr_results: [{ text: 'quarterly numbers' }],
    },
  ],
};
const PAGED_DEVICE = 'desk-3';
const PAGED_ITEMS = 23;
const transcriptionText = 'the quarterly review is tomorrow';

type Answer = SearchAnswer & Record<string, unknown>;

async function search(
  system: RunningSystem,
  query: string,
  token: string | null = tokens.all.token,
): Promise<{ status: number; body: Answer; headers: Headers }> {
  const response = await fetch(`${system.url}/search${query ? `?${query}` : ''}`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Answer,
  };
}

/** The texts of an answer, in its order (OCR text or transcription). */
const textsOf = (answer: SearchAnswer) =>
  answer.data.map((item) => (item.type === 'OCR' ? item.content.text : item.content.transcription));

async function storedOf(system: RunningSystem, device: string): Promise<ContentDocument[]> {
  const docs: ContentDocument[] = [];
  for await (const chunk of system.content.scanRange(
    { to: new Date('2200-01-01T00:00:00Z'), device },
    { chunkSize: 500 },
  )) {
    docs.push(...chunk);
  }
  return docs;
}

/** POST /add, and in distributed mode (a 200 means in the broker) wait until it is stored. */
async function addAndStore(
  system: RunningSystem,
  device: string,
  content: Record<string, unknown>,
  count: number,
): Promise<void> {
  const before = (await storedOf(system, device)).length;
  const added = await post(`${system.url}/add`, { device_name: device, content });
  expect(added.status).toBe(200);
  const stored = await waitUntil(
    () => storedOf(system, device),
    (docs) => docs.length === before + count,
  );
  expect(stored).toHaveLength(before + count);
}

/** GET with raw headers (fetch always sends its own Host). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
      })
      .on('error', reject);
  });
}

describe.each(modes)('GET /search in %s mode', (mode) => {
  let system: RunningSystem;

  beforeAll(async () => {
    system = await startSystem(mode, {
      env: { GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK: 'true', GATEWAY_SEARCH_TIMEOUT: '3000' },
    });
    for (const [device, data] of Object.entries(frames)) {
      await addAndStore(system, device, { content_type: 'frames', data }, data.length);
    }
    await addAndStore(
      system,
      'desk-1',
      { content_type: 'transcription', data: { transcription: transcriptionText } },
      1,
    );
    const paged = Array.from({ length: PAGED_ITEMS }, (_, i) => buildItem(i));
    await addAndStore(system, PAGED_DEVICE, { content_type: 'frames', data: paged }, PAGED_ITEMS);
  }, 180_000);

  afterAll(async () => {
    await system?.stop();
  });

  it('when content is posted, then the next search finds it (no stale answer from before)', async () => {
    const before = await search(system, `q=zanzibar${mode}`);
    expect(before.body.pagination.total).toBe(0);

    await addAndStore(
      system,
      'desk-9',
      {
        content_type: 'frames',
        data: [buildItem(1, { ocr_results: [{ text: `a trip to Zanzibar${mode}` }] })],
      },
      1,
    );
    // Embedded: a 200 means committed. Distributed: stored once the port shows it; either way
    // the very next search must find it.
    const after = await search(system, `q=zanzibar${mode}`);
    expect(after.status).toBe(200);
    expect(after.headers.get('cache-control')).toBe('no-store');
    expect(after.body.pagination.total).toBe(1);
    expect(textsOf(after.body)).toEqual([`a trip to Zanzibar${mode}`]);
  });

  it('when results come back, then every field is present with its type, times in UTC with Z, ids as strings', async () => {
    const { status, body } = await search(system, 'q=quarterly&device_name=desk-1');
    expect(status).toBe(200);
    expect(validators.searchAnswer.check(structuredClone(body))).toEqual([]);
    expect(Object.keys(body).sort()).toEqual(['data', 'pagination']);
    const ocr = body.data.find((item) => item.type === 'OCR');
    const audio = body.data.find((item) => item.type === 'Audio');
    expect(Object.keys(ocr?.content ?? {}).sort()).toEqual([...ocrFields].sort());
    expect(Object.keys(audio?.content ?? {}).sort()).toEqual([...audioFields].sort());
    const [stored] = (await storedOf(system, 'desk-1')).filter(
      (doc) => doc.file_path === '/captures/desk-1/a.mp4',
    );
    expect(ocr?.content).toEqual({
      frame_id: stored?._id,
      text: 'Quarterly report draft\nRevenue café',
      timestamp: '2026-11-20T10:00:00.000Z',
      file_path: '/captures/desk-1/a.mp4',
      offset_index: null,
      app_name: 'Chromium',
      window_name: 'Quarterly Report - Docs',
      tags: ['work'],
      frame: null,
      frame_name: null,
      browser_url: null,
      focused: true,
      device_name: 'desk-1',
    });
    expect(typeof ocr?.content.frame_id).toBe('string');
  });

  it('when a transcription matches, then it comes back as Audio', async () => {
    const { body } = await search(system, 'content_type=audio');
    expect(body.pagination.total).toBe(1);
    expect(body.data).toEqual([
      {
        type: 'Audio',
        content: {
          chunk_id: expect.any(String) as string,
          transcription: transcriptionText,
          timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as string,
          file_path: null,
          offset_index: null,
          tags: [],
          device_name: 'desk-1',
          device_type: null,
          speaker: null,
          start_time: null,
          end_time: null,
        },
      },
    ]);
  });

  it.each([
    ['every word must match', 'q=quarterly+report', ['Quarterly report draft\nRevenue café']],
    ['case and diacritics are folded', 'q=CAFE', ['Quarterly report draft\nRevenue café']],
    [
      'content_type=ocr, newest first',
      'content_type=ocr&device_name=desk-1',
      ['meeting invoice', 'function deploy return', 'Quarterly report draft\nRevenue café'],
    ],
    [
      'app_name is matched within the name, case-insensitive',
      'app_name=chrom',
      ['meeting invoice', 'Quarterly report draft\nRevenue café'],
    ],
    ['window_name likewise', 'window_name=INBOX', ['meeting invoice']],
    ['device_name', 'device_name=desk-2', ['quarterly numbers']],
    [
      'both time bounds are inclusive',
      'start_time=2026-11-20T10:30:00Z&end_time=2026-11-20 19:00:00+08:00',
      ['function deploy return', 'quarterly numbers'],
    ],
    [
      'min_length and max_length count characters',
      'min_length=15&max_length=15&content_type=ocr',
      ['meeting invoice'],
    ],
    [
      'max_content_length cuts in the middle',
      'q=meeting&device_name=desk-1&max_content_length=7',
      ['mee…ice'],
    ],
    ['an older type we never store', 'content_type=ui', []],
    [
      'audio+ocr with its + sent unencoded (a space)',
      'q=quarterly&content_type=audio+ocr&device_name=desk-1',
      [transcriptionText, 'Quarterly report draft\nRevenue café'],
    ],
  ])('when %s, then the matching items come back', async (_, query, texts) => {
    const { status, body } = await search(system, query);
    expect(status).toBe(200);
    expect(textsOf(body)).toEqual(texts);
    expect(body.pagination.total).toBe(texts.length);
  });

  it('when order=relevance, then the same items come back, ranked', async () => {
    const { status, body } = await search(system, 'q=quarterly&order=relevance');
    expect(status).toBe(200);
    expect([...textsOf(body)].sort()).toEqual(
      ['Quarterly report draft\nRevenue café', 'quarterly numbers', transcriptionText].sort(),
    );
  });

  it('when a client pages until offset >= total, then it reads every item exactly once', async () => {
    const ids: string[] = [];
    let offset = 0;
    let total = Number.POSITIVE_INFINITY;
    let pages = 0;
    while (offset < total && pages < 20) {
      const { status, body } = await search(
        system,
        `device_name=${PAGED_DEVICE}&limit=5&offset=${offset}`,
      );
      expect(status).toBe(200);
      expect(body.pagination).toMatchObject({ limit: 5, offset });
      total = body.pagination.total;
      ids.push(...body.data.map((item) => (item.type === 'OCR' ? item.content.frame_id : '')));
      offset += body.data.length;
      pages += 1;
    }
    const stored = (await storedOf(system, PAGED_DEVICE)).map((doc) => doc._id);
    expect(total).toBe(PAGED_ITEMS);
    expect(pages).toBe(5);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...stored].sort());
  });

  it('when limit is over the cap, then the page is capped at 1000 and says so', async () => {
    const { status, body } = await search(system, `device_name=${PAGED_DEVICE}&limit=5000`);
    expect(status).toBe(200);
    expect(body.pagination).toEqual({ limit: 1000, offset: 0, total: PAGED_ITEMS });
    expect(body.data).toHaveLength(PAGED_ITEMS);
  });

  it('when a parameter is bad, then 400 names it and its rule', async () => {
    const { status, body } = await search(system, 'limit=-1&content_type=pictures');
    expect(status).toBe(400);
    expect(body).toMatchObject({
      success: false,
      errors: [
        { path: 'query.content_type', rule: 'enum' },
        { path: 'query.limit', rule: 'type' },
      ],
    });
  });

  it("when a request shaped like screenpipe's SDKs comes without a token from loopback, then it is served", async () => {
    // As pipe.queryScreenpipe builds it (@screenpipe/js 1.x, mediar-ai/screenpipe
    // screenpipe-js/node-sdk/src/index.ts): URLSearchParams over the camelCase params turned
    // snake_case, undefined and '' left out, no Authorization header.
    const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    const queryOf = (params: Record<string, string | number | boolean | number[]>) => {
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(params)) {
        if (value === '') continue;
        query.append(snake(key), Array.isArray(value) ? value.join(',') : String(value));
      }
      return query.toString();
    };
    const v1 = queryOf({
      q: 'quarterly',
      contentType: 'ocr',
      limit: 10,
      offset: 0,
      startTime: '2026-11-19T00:00:00.000Z',
      endTime: new Date().toISOString(),
      appName: 'Chromium',
      includeFrames: false,
      minLength: 1,
      maxLength: 10000,
    });
    expect(v1).toContain('include_frames=false');
    const first = await search(system, v1, null);
    expect(first.status).toBe(200);
    expect(textsOf(first.body)).toEqual(['Quarterly report draft\nRevenue café']);
    // As ScreenpipeClient.search builds it (@screenpipe/js 2.x, mediar-ai/screenpipe
    // packages/screenpipe-js/common/client.ts, buildQueryString: arrays joined by commas),
    // with its 2.x content types and filters we do not record (ignored).
    const v2 = queryOf({
      q: 'quarterly',
      contentType: 'vision+audio+input',
      limit: 20,
      speakerIds: [1, 2],
      focused: true,
      browserUrl: 'https://docs.example',
      includeCloud: false,
    });
    const second = await search(system, v2, null);
    expect(second.status).toBe(200);
    expect(second.body.pagination.total).toBe(3);
  });

  it('when a request without a token names a foreign Host (DNS rebinding), then it is refused; a loopback Host is served', async () => {
    const { port } = new URL(system.url);
    const path = `${system.url}/search?q=quarterly`;
    expect((await rawGet(path, { host: `attacker.example:${port}` })).status).toBe(403);
    expect((await rawGet(path, { host: `localhost:${port}` })).status).toBe(200);
    expect((await rawGet(path, { host: `127.0.0.1:${port}` })).status).toBe(200);
  });

  it('when the token lacks the search scope, then 403', async () => {
    const { status, body } = await search(system, 'q=quarterly', tokens.ingestDesk1.token);
    expect(status).toBe(403);
    expect(body.message).toBe('token test-desk1 lacks the search scope');
  });

  it("when a token is bound to a device, then it sees only that device's items; naming another is 403", async () => {
    const own = await search(system, 'q=quarterly', tokens.searchDesk1.token);
    expect(own.status).toBe(200);
    expect(own.body.pagination.total).toBe(2);
    expect(own.body.data.map((item) => item.content.device_name)).toEqual(['desk-1', 'desk-1']);
    const other = await search(system, 'device_name=desk-2', tokens.searchDesk1.token);
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('token test-search-desk1 is not allowed for device "desk-2"');
  });

  // Last: it stops the ingest workers. Embedded mode runs them in the gateway's process, so
  // there is no worker to stop there; services/gateway/src/entry/search.routes.test.ts shows
  // the 503 over the in-process bus with nothing serving search.rpc.
  if (mode === 'distributed') {
    it('when the ingest workers are stopped, then a search is 503 with a reason and Retry-After', async () => {
      await system.stopService?.('ingest-worker');
      const started = Date.now();
      const { status, body, headers } = await search(system, 'q=quarterly');
      expect(status).toBe(503);
      expect(headers.get('retry-after')).toBe('5');
      expect(body.message).toBe('no answer from an ingest worker within 3000 ms (is one running?)');
      expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    });
  }
});

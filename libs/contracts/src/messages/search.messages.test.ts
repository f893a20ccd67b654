import {
  queueNames,
  topology,
  validators,
  type FieldError,
  type SearchAnswer,
  type SearchRequest,
} from '../index';

const rules = (errors: FieldError[]) => errors.map(({ path, rule }) => ({ path, rule }));

const request: SearchRequest = {
  q: 'report',
  content_types: ['frames', 'transcription'],
  from: '2026-11-22T00:00:00.000Z',
  to: '2026-11-22T23:59:59.999Z',
  devices: ['desk-1'],
  app_name: 'Chromium',
  order: 'newest',
  limit: 20,
  offset: 0,
};

const answer: SearchAnswer = {
  data: [
    {
      type: 'OCR',
      content: {
        frame_id: '2t-abc',
        text: 'report',
        timestamp: '2026-11-22T10:00:00.000Z',
        file_path: '/f.mp4',
        offset_index: null,
        app_name: null,
        window_name: null,
        tags: [],
        frame: null,
        frame_name: null,
        browser_url: null,
        focused: null,
        device_name: 'desk-1',
      },
    },
    {
      type: 'Audio',
      content: {
        chunk_id: '2r-abc',
        transcription: 'a report',
        timestamp: '2026-11-22T09:00:00.000Z',
        file_path: null,
        offset_index: null,
        tags: ['t'],
        device_name: 'desk-1',
        device_type: null,
        speaker: null,
        start_time: null,
        end_time: null,
      },
    },
  ],
  pagination: { limit: 20, offset: 0, total: 2 },
};

describe('search messages', () => {
  it('when search.rpc.v2 is declared, then it is a quorum queue of its own (it outlives a node; requests expire per message)', () => {
    expect(queueNames.searchRpc).toBe('search.rpc.v2');
    expect(topology.queues).toContainEqual({
      name: 'search.rpc.v2',
      arguments: { 'x-queue-type': 'quorum' },
    });
  });

  it('when a resolved request is checked, then it passes, and each broken field is named', () => {
    expect(validators.searchRequest.check(structuredClone(request))).toEqual([]);
    expect(rules(validators.searchRequest.check({ ...request, content_types: [] }))).toEqual([
      { path: 'content_types', rule: 'minItems' },
    ]);
    expect(rules(validators.searchRequest.check({ ...request, limit: 1001 }))).toEqual([
      { path: 'limit', rule: 'maximum' },
    ]);
    expect(rules(validators.searchRequest.check({ ...request, from: '2026-11-22' }))).toEqual([
      { path: 'from', rule: 'format' },
    ]);
    expect(rules(validators.searchRequest.check({ ...request, devices: [] }))).toEqual([
      { path: 'devices', rule: 'minItems' },
    ]);
  });

  it('when an answer has every field, then it passes; a missing field or an unknown type does not', () => {
    expect(validators.searchAnswer.check(structuredClone(answer))).toEqual([]);
    const missing = structuredClone(answer) as {
      data: Array<{ content: Record<string, unknown> }>;
    };
    delete missing.data[0]?.content.focused;
    expect(rules(validators.searchAnswer.check(missing))).toEqual([
      { path: 'data[0].content.focused', rule: 'required' },
    ]);
    const unknown = structuredClone(answer) as { data: Array<{ type: string }> };
    if (unknown.data[1]) unknown.data[1].type = 'UI';
    expect(rules(validators.searchAnswer.check(unknown))).toEqual([
      { path: 'data[1].type', rule: 'enum' },
    ]);
  });

  it('when a reply is ok or refused, then both shapes pass and a refusal needs its code', () => {
    expect(
      validators.searchReply.check({ outcome: 'ok', answer: structuredClone(answer) }),
    ).toEqual([]);
    expect(
      validators.searchReply.check({ outcome: 'refused', code: 'store_unavailable', message: 'x' }),
    ).toEqual([]);
    expect(rules(validators.searchReply.check({ outcome: 'refused', message: 'x' }))).toEqual([
      { path: 'code', rule: 'required' },
    ]);
  });
});

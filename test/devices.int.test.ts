/**
 * GET /devices, GET /devices/{name} and GET /health end to end in both modes: content posted
 * through POST /add is counted by the ingest workers' store as it is stored (per-device
 * counters, never counted on request) and read back through the gateway over search.rpc. The
 * counters' rules are the storage contract suite's, the statuses' the gateway's unit tests';
 * this is the route: shape, counts after a re-sent batch, a device that stops sending, tokens,
 * paging and filters, screenpipe's /health, and the workers being gone.
 */
import {
  validators,
  type DeviceDetail,
  type DevicesAnswer,
  type DeviceSummary,
} from '@screenfleet/contracts';
import { waitUntil } from '../services/archive-worker/test/support';
import { get, post, tokens } from './support/gateway';
import { modes, startSystem, type RunningSystem } from './support/system';

/** Short, so the stall test waits seconds; every "ok" below is read right after a store. */
const STALL_AFTER_MS = 6000;

const getFrom = <T>(system: RunningSystem, path: string, token?: string | null) =>
  get<T>(`${system.url}${path}`, token);

/** Frames of `count` items timestamped now (the windows count them), for one device. */
function frames(count: number, tag: string) {
  const now = Date.now();
  return {
    content_type: 'frames',
    data: Array.from({ length: count }, (_, i) => ({
      file_path: `/captures/${tag}/${i}.mp4`,
      timestamp: new Date(now - i * 1000).toISOString(),
      app_name: 'Code',
      ocr_results: [{ text: `item ${i} of ${tag}` }],
    })),
  };
}

async function summaryOf(
  system: RunningSystem,
  device: string,
): Promise<DeviceSummary | undefined> {
  const { body } = await getFrom<DevicesAnswer>(system, '/devices?limit=1000');
  return body.data.find((d) => d.device_name === device);
}

/** POST /add, then wait until GET /devices counts `stored` items for the device. */
async function addAndCount(
  system: RunningSystem,
  device: string,
  content: Record<string, unknown>,
  stored: number,
): Promise<DeviceSummary | undefined> {
  const added = await post(`${system.url}/add`, { device_name: device, content });
  expect(added.status).toBe(200);
  return waitUntil(
    () => summaryOf(system, device),
    (summary) => summary?.capture.items_stored === stored,
  );
}

describe.each(modes)('GET /devices and /health in %s mode', (mode) => {
  let system: RunningSystem;
  const desk = (name: string) => `${mode}-${name}`;

  beforeAll(async () => {
    system = await startSystem(mode, {
      env: {
        CAPTURE_STALL_AFTER: String(STALL_AFTER_MS),
        GATEWAY_SEARCH_TIMEOUT: '3000',
        GATEWAY_TOKENS: JSON.stringify([
          ...Object.values(tokens),
          {
            id: 'bound-a',
            token: `token-bound-a-${mode}-0001`,
            scopes: ['search'],
            devices: [desk('a')],
          },
        ]),
      },
    });
    await addAndCount(system, desk('a'), frames(3, 'a1'), 3);
    await addAndCount(
      system,
      desk('a'),
      {
        content_type: 'transcription',
        data: { transcription: 'hello from a', timestamp: new Date().toISOString() },
      },
      4,
    );
    await addAndCount(system, desk('b'), frames(2, 'b1'), 2);
  }, 180_000);

  afterAll(async () => {
    await system?.stop();
  });

  it('when devices sent content, then each is listed with its counts by content type, in the documented shape', async () => {
    const { status, body, headers } = await getFrom<DevicesAnswer>(system, '/devices');
    expect(status).toBe(200);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(validators.devicesAnswer.check(structuredClone(body))).toEqual([]);
    const a = body.data.find((d) => d.device_name === desk('a'));
    expect(a?.capture).toMatchObject({
      items_stored: 4,
      items_last_hour: 4,
      items_last_24h: 4,
      by_content_type: {
        frames: { items_stored: 3, items_last_hour: 3, items_last_24h: 3 },
        transcription: { items_stored: 1, items_last_hour: 1, items_last_24h: 1 },
      },
    });
    expect(a?.capture.last_item_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(a?.agent).toEqual({ status: 'offline', last_heartbeat_time: null });
    expect(a?.archive).toEqual({ items_archived: 0, last_archived_item_time: null });
  });

  it('when a batch is sent again, then nothing is counted twice', async () => {
    const batch = frames(5, 'resent');
    await addAndCount(system, desk('c'), batch, 5);

    const again = await post(`${system.url}/add`, { device_name: desk('c'), content: batch });
    expect(again.status).toBe(200);
    // A marker batch after it: once it is counted, the re-sent one has been handled too (one
    // queue, in order; embedded: a 200 means committed).
    const after = await addAndCount(system, desk('c'), frames(1, 'marker'), 6);

    expect(after?.capture.items_stored).toBe(6);
    expect(after?.capture.by_content_type.frames?.items_stored).toBe(6);
  });

  it('when a device stops sending, then it turns stalled after CAPTURE_STALL_AFTER; one that sent once is idle', async () => {
    await addAndCount(system, desk('stops'), frames(1, 's1'), 1);
    const sending = await addAndCount(system, desk('stops'), frames(2, 's2'), 3);
    expect(sending?.capture_status).toBe('ok');

    const stalled = await waitUntil(
      () => summaryOf(system, desk('stops')),
      (s) => s?.capture_status === 'stalled',
      STALL_AFTER_MS + 20_000,
    );
    expect(stalled?.capture_status).toBe('stalled');
    const filtered = await getFrom<DevicesAnswer>(system, '/devices?status=stalled&limit=1000');
    expect(filtered.body.data.map((d) => d.device_name)).toContain(desk('stops'));
    expect(filtered.body.data.every((d) => d.capture_status === 'stalled')).toBe(true);

    await addAndCount(system, desk('once'), frames(1, 'o1'), 1);
    const idle = await waitUntil(
      () => summaryOf(system, desk('once')),
      (s) => s?.capture_status === 'idle',
      STALL_AFTER_MS + 20_000,
    );
    expect(idle?.capture_status).toBe('idle');
  });

  it('when paged, sorted and filtered, then pages split the total and sort keys apply', async () => {
    const all = await getFrom<DevicesAnswer>(system, '/devices?limit=1000');
    const names = all.body.data.map((d) => d.device_name);
    expect(names).toEqual([...names].sort());
    expect(all.body.pagination).toEqual({ limit: 1000, offset: 0, total: names.length });

    const page = await getFrom<DevicesAnswer>(system, '/devices?limit=1&offset=1');
    expect(page.body.pagination).toEqual({ limit: 1, offset: 1, total: names.length });
    expect(page.body.data.map((d) => d.device_name)).toEqual([names[1]]);

    const newest = await getFrom<DevicesAnswer>(system, '/devices?sort=last_item_time&limit=1000');
    const times = newest.body.data.map((d) => d.capture.last_item_time ?? '');
    expect(times).toEqual([...times].sort().reverse());

    const capped = await getFrom<DevicesAnswer>(system, '/devices?limit=5000');
    expect(capped.body.pagination.limit).toBe(1000);

    const bad = await getFrom<{ code: string; errors: Array<{ path: string; rule: string }> }>(
      system,
      '/devices?status=sleeping&sort=size',
    );
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e) => [e.path, e.rule])).toEqual([
      ['query.status', 'enum'],
      ['query.sort', 'enum'],
    ]);
  });

  it('when a token is bound to devices, then it sees only those, and another device is a 404 like an unknown one', async () => {
    const bound = `token-bound-a-${mode}-0001`;
    const list = await getFrom<DevicesAnswer>(system, '/devices', bound);
    expect(list.body.data.map((d) => d.device_name)).toEqual([desk('a')]);
    expect(list.body.pagination.total).toBe(1);

    const other = await getFrom<{ code: string; message: string }>(
      system,
      `/devices/${desk('b')}`,
      bound,
    );
    const unknown = await getFrom<{ code: string; message: string }>(
      system,
      `/devices/${desk('nobody')}`,
      bound,
    );
    expect(other.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(other.body.code).toBe(unknown.body.code);
    expect((await getFrom(system, `/devices/${desk('a')}`, bound)).status).toBe(200);
    expect((await getFrom(system, '/devices', tokens.archiveReader.token)).status).toBe(403);
    expect((await getFrom(system, '/devices', null)).status).toBe(401);
  });

  it('when one device is asked for, then it comes with 24 hourly and 30 daily buckets holding its items', async () => {
    const { status, body } = await getFrom<DeviceDetail>(
      system,
      `/devices/${encodeURIComponent(desk('a'))}`,
    );
    expect(status).toBe(200);
    expect(validators.deviceDetail.check(structuredClone(body))).toEqual([]);
    expect(body.timeline.hourly).toHaveLength(24);
    expect(body.timeline.daily).toHaveLength(30);
    const hours = body.timeline.hourly.map((h) => Date.parse(h.start));
    expect(hours.every((h, i) => i === 0 || h - hours[i - 1]! === 3_600_000)).toBe(true);
    expect(body.timeline.hourly.reduce((n, h) => n + h.items, 0)).toBe(4);
    expect(body.timeline.daily.reduce((n, d) => n + d.items, 0)).toBe(4);

    const missing = await getFrom<{ code: string }>(system, '/devices/no-such-device');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
  });

  it("when /health is polled without a token, then it answers in screenpipe's shape with no device names", async () => {
    await addAndCount(system, desk('health'), frames(1, 'h1'), 1);
    const spoken = { transcription: 'still here', timestamp: new Date().toISOString() };
    await addAndCount(system, desk('health'), { content_type: 'transcription', data: spoken }, 2);
    const { status, body } = await getFrom<Record<string, unknown>>(system, '/health', null);
    expect(status).toBe(200);
    expect(validators.healthAnswer.check(structuredClone(body))).toEqual([]);
    expect(Object.keys(body).sort()).toEqual(
      [
        'audio_status',
        'frame_status',
        'last_audio_timestamp',
        'last_frame_timestamp',
        'message',
        'status',
        'status_code',
        'verbose_instructions',
      ].sort(),
    );
    expect(body).toMatchObject({ status: 'healthy', status_code: 200, frame_status: 'ok' });
    expect(JSON.stringify(body)).not.toContain(mode);
  });

  if (mode === 'distributed') {
    it('when the ingest workers are gone, then /health is degraded naming them and /devices is a 503', async () => {
      await system.stopService?.('ingest-worker');

      // /health answers from a summary up to a second old while the next is read behind it: the
      // outage shows once a read has failed (no answer within its 2 s).
      const health = await waitUntil(
        () => getFrom<Record<string, unknown>>(system, '/health', null),
        (answer) => answer.body.status === 'degraded',
      );
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'degraded', status_code: 503 });
      expect(health.body.message).toMatch(/ingest workers/);
      const devices = await getFrom<{ code: string }>(system, '/devices');
      expect(devices.status).toBe(503);
      expect(devices.body.code).toBe('worker_unavailable');
    });
  }
});

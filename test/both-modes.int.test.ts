/**
 * The HTTP API end to end in both modes (ARCHITECTURE.md: "Both modes pass the same end-to-end
 * tests"): ingest, bad requests, archive status and the archive round trip, through the
 * distributed services (RabbitMQ + FerretDB) and through `npm start`'s embedded process (the
 * in-process bus + SQLite). The operator path in both modes is in both-modes-operator.int.test.ts.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { ContentDocument } from '@screenfleet/storage';
import { buildItem } from './support/content';
import { waitUntil } from '../services/archive-worker/test/support';
import { get, post } from './support/gateway';
import { modes, startSystem, type RunningSystem } from './support/system';
import { numberFields, statusFields } from './support/archive-status';

const DAY_MS = 86_400_000;

async function all(system: RunningSystem): Promise<ContentDocument[]> {
  const docs: ContentDocument[] = [];
  for await (const chunk of system.content.scanRange(
    { to: new Date('2200-01-01T00:00:00Z') },
    { chunkSize: 500 },
  )) {
    docs.push(...chunk);
  }
  return docs;
}

describe.each(modes)('the HTTP API in %s mode', (mode) => {
  let system: RunningSystem;
  const start = Date.now();
  const oldAt = (i: number) => new Date(start - 40 * DAY_MS + i * 1000).toISOString();
  const oldItems = Array.from({ length: 5 }, (_, i) => buildItem(i, { timestamp: oldAt(i) }));
  // Client times an hour ago, on a whole minute: inside the retention days whatever the date (a
  // fixed date ages into the archive's pending count a week later).
  const recent = Math.floor((start - 3_600_000) / 60_000) * 60_000;
  const isoAt = (ms: number) => new Date(ms).toISOString();

  beforeAll(async () => {
    system = await startSystem(mode, {
      env: { ARCHIVE_RETENTION_DAYS: '7', ARCHIVE_CHUNK_SIZE: '2' },
    });
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
  });

  const url = (p: string) => system.url + p;

  it('when a batch is posted, then every item is stored with its fields, once, even when posted again', async () => {
    const items = [
      buildItem(1, {
        // The same instant written at +08:00, with one digit of fraction.
        timestamp: isoAt(recent + 1500 + 8 * 3_600_000).replace('.500Z', '.5+08:00'),
        ocr_results: [
          { text: 'hello', confidence: 0.75, text_json: '[{"t":1}]', ocr_engine: 'tesseract' },
        ],
        tags: ['alpha', 'beta'],
      }),
      buildItem(2),
      buildItem(3, { app_name: 'Firefox' }),
    ];
    const batch = { device_name: `${mode}-desk`, content: { content_type: 'frames', data: items } };

    const ofDevice = async (device: string) =>
      (await all(system)).filter((doc) => doc.device_name === device);

    const first = await post(url('/add'), batch);

    expect(first).toMatchObject({ status: 200, body: { success: true } });
    // Embedded: a 200 means committed, so the items are there at once. Distributed: a 200
    // means in the broker; the worker stores them soon after.
    const stored =
      mode === 'embedded'
        ? await ofDevice(`${mode}-desk`)
        : await waitUntil(
            () => ofDevice(`${mode}-desk`),
            (docs) => docs.length === 3,
          );
    expect(stored).toHaveLength(3);
    // Posted again, then a marker behind it: once the marker is stored, so was the repost.
    expect((await post(url('/add'), batch)).status).toBe(200);
    const marker = { ...batch, device_name: `${mode}-marker` };
    expect((await post(url('/add'), marker)).status).toBe(200);
    await waitUntil(
      () => ofDevice(`${mode}-marker`),
      (docs) => docs.length === 3,
    );
    expect(await ofDevice(`${mode}-desk`)).toHaveLength(3);
    const firstDoc = stored.find((doc) => doc.ocr_results[0]?.text === 'hello');
    expect(firstDoc).toMatchObject({
      content_type: 'frames',
      timestamp: new Date(recent + 1500),
      timestamp_source: 'client',
      file_path: items[0]!.file_path,
      app_name: 'Code',
      tags: ['alpha', 'beta'],
      ocr_results: [
        {
          text: 'hello',
          confidence: 0.75,
          text_json: '[{"t":1}]',
          ocr_engine: 'tesseract',
          focused: null,
        },
      ],
    });
    expect(stored.map((doc) => doc.app_name).sort()).toEqual(['Code', 'Code', 'Firefox']);
  });

  it('when a transcription is sent again (a retry), then it is stored once; said again at another time, it is a second item (docs/adr/0009)', async () => {
    const device = `${mode}-mic`;
    const spoken = (data: Record<string, unknown>) =>
      post(url('/add'), { device_name: device, content: { content_type: 'transcription', data } });
    const ofDevice = async () => (await all(system)).filter((doc) => doc.device_name === device);

    // Without a timestamp (screenpipe's shape): the same words within the retry window are a
    // retry. With one: the utterance's time tells two from one.
    for (const data of [
      { transcription: 'ship it', transcription_engine: 'whisper' },
      { transcription: 'ship it', transcription_engine: 'whisper' },
      { transcription: 'yes', timestamp: isoAt(recent).replace('.000Z', 'Z') },
      { transcription: 'yes', timestamp: isoAt(recent).replace('.000Z', 'Z') },
      { transcription: 'yes', timestamp: isoAt(recent + 300_000).replace('.000Z', 'Z') },
    ]) {
      expect((await spoken(data)).status).toBe(200);
    }

    const stored = await waitUntil(ofDevice, (docs) => docs.length >= 3);
    // A marker sent last: once it is stored, so is everything sent before it.
    expect((await spoken({ transcription: 'marker' })).status).toBe(200);
    await waitUntil(ofDevice, (docs) => docs.some((doc) => doc.transcription?.text === 'marker'));
    expect(
      (await ofDevice())
        .filter((doc) => doc.transcription?.text !== 'marker')
        .map((doc) => [doc.transcription?.text, doc.timestamp_source, doc.timestamp.toISOString()])
        .sort(),
    ).toEqual([
      ['ship it', 'received', expect.any(String)],
      ['yes', 'client', isoAt(recent)],
      ['yes', 'client', isoAt(recent + 300_000)],
    ]);
    expect(stored.length).toBeGreaterThanOrEqual(3);
  });

  it.each([
    [
      'no device_name',
      { content: { content_type: 'frames', data: [buildItem(1)] } },
      'device_name',
    ],
    [
      'a bad timestamp',
      {
        device_name: 'd',
        content: { content_type: 'frames', data: [buildItem(1, { timestamp: 'yesterday' })] },
      },
      'content.data[0].timestamp',
    ],
    [
      'a device name over 200 bytes',
      { device_name: 'é'.repeat(101), content: { content_type: 'frames', data: [buildItem(1)] } },
      'device_name',
    ],
  ])(
    'when the batch has %s, then 400 names the field and nothing is stored',
    async (_, body, field) => {
      const before = (await all(system)).length;

      const response = await post(url('/add'), body);

      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
      expect((await all(system)).length).toBe(before);
    },
  );

  it('when a request has no token, then 401; a GET on an unknown path is 404; broken JSON is 400', async () => {
    const noToken = await fetch(url('/add'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const unknown = await get(url('/no/such/path'));
    const broken = await post(url('/add'), '{"device_name": ');

    expect(noToken.status).toBe(401);
    expect(unknown.status).toBe(404);
    expect(broken.status).toBe(400);
  });

  it('when old items are stored, then GET /archive/status answers every field, numbers as numbers, the old items pending', async () => {
    const added = await post(url('/add'), {
      device_name: `${mode}-old`,
      content: { content_type: 'frames', data: oldItems },
    });
    expect(added.status).toBe(200);

    // The pending count is served from a count at most a second old (pending-counter.ts), and
    // in distributed mode the items are stored just after the 200: ask until it has them.
    const status = await waitUntil(
      () => get(url('/archive/status?timezone=utc')),
      ({ body }) => body.pending_count === oldItems.length,
    );

    expect(status.status).toBe(200);
    expect(Object.keys(status.body).sort()).toEqual([...statusFields].sort());
    for (const field of numberFields) expect(typeof status.body[field]).toBe('number');
    expect(status.body).toMatchObject({
      enabled: false,
      retention_days: 7,
      pending_count: oldItems.length,
      chunks_uploaded: 0,
    });
  });

  it('when the archive is initialised and runs, then the old items move to the archive directory and a restore brings them back exactly', async () => {
    const before = (await all(system)).filter((doc) => doc.device_name === `${mode}-old`);
    expect(before).toHaveLength(oldItems.length);

    const init = await post(url('/archive/init'), { retention_days: 7 });
    expect(init.status).toBe(200);
    const status = await waitUntil(
      () => get(url('/archive/status')),
      ({ body }) => body.pending_count === 0 && body.last_cleanup !== null,
      30_000,
    );

    expect(status.body).toMatchObject({ enabled: true, pending_count: 0, last_error: null });
    expect(status.body.chunks_uploaded).toBe(3); // 5 items in chunks of 2
    expect((await all(system)).filter((doc) => doc.device_name === `${mode}-old`)).toEqual([]);
    expect(existsSync(path.join(system.archiveDir, 'chunks'))).toBe(true);
    expect(readdirSync(system.archiveDir)).toEqual(expect.arrayContaining(['chunks', 'manifests']));

    expect((await post(url('/archive/configure'), { enabled: false })).status).toBe(200);
    const restore = await post(url('/archive/restore'), {
      from: new Date(start - 41 * DAY_MS).toISOString(),
      to: new Date(start - 39 * DAY_MS).toISOString(),
    });

    expect(restore).toMatchObject({ status: 200, body: { restored: oldItems.length } });
    const after = (await all(system)).filter((doc) => doc.device_name === `${mode}-old`);
    expect(after).toEqual(before);
  });

  it('when no agent serves the device, then a key press is 404 naming the device, at once', async () => {
    const started = Date.now();

    const response = await post(url('/experimental/operator/press-key-by-index'), {
      element_index: 0,
      key: 'a',
      device_name: `${mode}-nobody`,
    });

    expect(response.status).toBe(404);
    expect(response.body.message).toMatch(
      new RegExp(`no agent is connected for device "${mode}-nobody"`),
    );
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

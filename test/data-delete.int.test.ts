/**
 * Deleting what was captured (POST /data/delete-range, /data/delete-device) end to end in both
 * modes: items leave the store and search, media files go only when no remaining item names
 * them, archived items are recorded as deleted so no restore brings them back, repeats change
 * nothing, and who may delete what (docs/adr/0014).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ContentDocument } from '@screenfleet/storage';
import { waitUntil } from '../services/archive-worker/test/support';
import { buildItem } from './support/content';
import { get, post, tokens } from './support/gateway';
import { modes, startSystem, type RunningSystem } from './support/system';

const DAY_MS = 86_400_000;

async function ofDevice(system: RunningSystem, device: string): Promise<ContentDocument[]> {
  const docs: ContentDocument[] = [];
  for await (const chunk of system.content.scanRange(
    { to: new Date('2200-01-01T00:00:00Z'), device },
    { chunkSize: 500 },
  )) {
    docs.push(...chunk);
  }
  return docs;
}

const zeros = {
  success: true,
  items_deleted: 0,
  frames_deleted: 0,
  audio_transcriptions_deleted: 0,
  media_files_deleted: 0,
  archived_items_deleted: 0,
  archived_objects_unreadable: 0,
  devices: [],
};

describe.each(modes)('deleting captured data in %s mode', (mode) => {
  let system: RunningSystem;
  const mediaRoot = mkdtempSync(path.join(os.tmpdir(), `sf-delete-media-${mode}-`));
  const media = (name: string) => path.join(mediaRoot, name);
  const start = Date.now();
  /** Recent (never archived with a 7-day retention), a second apart. */
  const recentAt = (i: number) => new Date(start - 3_600_000 + i * 1000).toISOString();
  const oldAt = (i: number) => new Date(start - 40 * DAY_MS + i * 1000).toISOString();

  beforeAll(async () => {
    system = await startSystem(mode, {
      env: {
        ARCHIVE_RETENTION_DAYS: '7',
        ARCHIVE_CHUNK_SIZE: '2',
        ARCHIVE_MEDIA_ROOT: mediaRoot,
        GATEWAY_ALLOW_UNAUTHENTICATED_LOOPBACK: 'true',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
    rmSync(mediaRoot, { recursive: true, force: true });
  });

  const url = (p: string) => system.url + p;

  /** Posts items and waits until the store has them (distributed: stored after the 200). */
  async function store(device: string, items: Array<Record<string, unknown>>): Promise<void> {
    const before = (await ofDevice(system, device)).length;
    const added = await post(url('/add'), {
      device_name: device,
      content: { content_type: 'frames', data: items },
    });
    expect(added.status).toBe(200);
    await waitUntil(
      () => ofDevice(system, device),
      (docs) => docs.length === before + items.length,
    );
  }

  it('when a range of one device is deleted, then its items leave the store and search, only unreferenced media files go, and the answer counts them; sent again, zeros and nothing changes', async () => {
    const device = `${mode}-desk`;
    const other = `${mode}-other`;
    mkdirSync(media('desk'), { recursive: true });
    for (const name of ['shared.mp4', 'own.mp4', 'other.mp4']) {
      writeFileSync(media(`desk/${name}`), name);
    }
    await store(device, [
      buildItem(0, { timestamp: recentAt(0), file_path: media('desk/shared.mp4') }),
      buildItem(1, { timestamp: recentAt(1), file_path: media('desk/shared.mp4') }),
      buildItem(2, {
        timestamp: recentAt(2),
        file_path: media('desk/own.mp4'),
        ocr_results: [{ text: 'zebracrossing' }],
      }),
      // After the range: keeps shared.mp4 in use.
      buildItem(3, { timestamp: recentAt(3), file_path: media('desk/shared.mp4') }),
    ]);
    await store(other, [
      buildItem(4, {
        timestamp: recentAt(1),
        file_path: media('desk/other.mp4'),
        ocr_results: [{ text: 'zebracrossing' }],
      }),
    ]);
    const range = { start_time: recentAt(0), end_time: recentAt(3), device_name: device };

    const deleted = await post(url('/data/delete-range'), range);

    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({
      success: true,
      items_deleted: 3,
      frames_deleted: 3,
      audio_transcriptions_deleted: 0,
      media_files_deleted: 1,
      video_files_deleted: 1,
      audio_files_deleted: 0,
      archived_items_deleted: 0,
      devices: [{ device_name: device, items_deleted: 3, archived_items_deleted: 0 }],
    });
    expect((await ofDevice(system, device)).map((doc) => doc.timestamp.toISOString())).toEqual([
      recentAt(3),
    ]);
    expect(await ofDevice(system, other)).toHaveLength(1);
    expect(existsSync(media('desk/own.mp4'))).toBe(false);
    expect(existsSync(media('desk/shared.mp4'))).toBe(true);
    expect(existsSync(media('desk/other.mp4'))).toBe(true);
    // GET /devices counts what is left, first and last item times included.
    const counted = await get(url(`/devices/${device}`));
    expect(counted.status).toBe(200);
    expect(counted.body.capture).toMatchObject({
      items_stored: 1,
      first_item_time: recentAt(3),
      last_item_time: recentAt(3),
    });
    const found = await get(url('/search?q=zebracrossing'));
    expect(found.status).toBe(200);
    expect(found.body.pagination).toMatchObject({ total: 1 });
    expect(JSON.stringify(found.body.data)).toContain(other);

    const again = await post(url('/data/delete-range'), range);

    expect(again).toMatchObject({ status: 200, body: zeros });
    expect(await ofDevice(system, device)).toHaveLength(1);
    expect(existsSync(media('desk/shared.mp4'))).toBe(true);
    // One audit line per delete, with the token's id (the log reaches this process after the
    // answer: wait for it).
    const auditLines = () =>
      system
        .gatewayLog()
        .split('\n')
        .filter((line) => line.includes('"audit":"data"') && line.includes(device));
    const audit = await waitUntil(
      () => Promise.resolve(auditLines()),
      (lines) => lines.length >= 2,
    );
    expect(audit).toHaveLength(2);
    expect(audit[0]).toContain('"tokenId":"test-all"');
    expect(audit[0]).toContain('"action":"delete-range"');
    expect(audit[0]).toContain('"itemsDeleted":3');
  });

  it('when a token bound to desk-1 deletes another device, or a range of every device, then 403 and nothing is deleted; its own device it may delete', async () => {
    const device = `${mode}-elsewhere`;
    await store(device, [buildItem(10, { timestamp: recentAt(10) })]);
    await store('desk-1', [buildItem(11, { timestamp: recentAt(11) })]);
    const token = tokens.deleteDesk1.token;

    const otherDevice = await post(url('/data/delete-device'), { device_name: device }, token);
    const otherRange = await post(
      url('/data/delete-range'),
      { start_time: recentAt(0), end_time: recentAt(20), device_name: device },
      token,
    );
    const everyDevice = await post(
      url('/data/delete-range'),
      { start_time: recentAt(0), end_time: recentAt(20) },
      token,
    );

    expect(otherDevice).toMatchObject({
      status: 403,
      body: { message: `token test-delete-desk1 is not allowed for device "${device}"` },
    });
    expect(otherRange.status).toBe(403);
    expect(everyDevice.status).toBe(403);
    expect(everyDevice.body.errors).toEqual([
      expect.objectContaining({ path: 'device_name', rule: 'required' }),
    ]);
    expect(await ofDevice(system, device)).toHaveLength(1);
    expect(await ofDevice(system, 'desk-1')).toHaveLength(1);

    const own = await post(url('/data/delete-device'), { machine_id: 'desk-1' }, token);

    expect(own).toMatchObject({ status: 200, body: { items_deleted: 1 } });
    expect(await ofDevice(system, 'desk-1')).toEqual([]);
    // A deleted device leaves the fleet.
    expect((await get(url('/devices/desk-1'))).status).toBe(404);
    expect((await get(url(`/devices/${device}`))).status).toBe(200);
  });

  it('when a delete comes without a token over the loopback switch, or with a token lacking data:delete, then 403 and nothing is deleted', async () => {
    const device = `${mode}-loopback`;
    await store(device, [buildItem(20, { timestamp: recentAt(20) })]);

    const tokenless = await fetch(url('/data/delete-device'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_name: device }),
    });
    const reader = await post(
      url('/data/delete-device'),
      { device_name: device },
      tokens.archiveReader.token,
    );

    expect(tokenless.status).toBe(403);
    expect(((await tokenless.json()) as { message: string }).message).toBe(
      'token unauthenticated-loopback lacks the data:delete scope',
    );
    expect(reader.status).toBe(403);
    expect(await ofDevice(system, device)).toHaveLength(1);
  });

  it('when fields are missing or the end is not after the start, then 400 naming the fields', async () => {
    const missing = await post(url('/data/delete-range'), { end_time: recentAt(1) });
    const reversed = await post(url('/data/delete-range'), {
      start: recentAt(5),
      end: recentAt(1),
    });
    const noDevice = await post(url('/data/delete-device'), { name: 'x' });

    expect(missing).toMatchObject({
      status: 400,
      body: {
        success: false,
        errors: [
          { path: 'start_time', rule: 'required', detail: 'start_time is required (or start)' },
        ],
      },
    });
    expect(reversed.status).toBe(400);
    expect((reversed.body.errors as Array<{ path: string }>).map((e) => e.path)).toEqual([
      'start',
      'end',
    ]);
    expect(noDevice).toMatchObject({
      status: 400,
      body: { errors: [expect.objectContaining({ path: 'device_name', rule: 'required' })] },
    });
  });

  it('when archived items of a range are deleted, then the answer counts them and a restore of that range brings none of them back', async () => {
    const device = `${mode}-old`;
    const kept = `${mode}-old-kept`;
    await store(
      device,
      [0, 1, 2, 3, 4].map((i) => buildItem(100 + i, { timestamp: oldAt(i) })),
    );
    await store(
      kept,
      [5, 6].map((i) => buildItem(100 + i, { timestamp: oldAt(i) })),
    );
    const init = await post(url('/archive/init'), { retention_days: 7 });
    expect(init.status).toBe(200);
    await waitUntil(
      () => get(url('/archive/status')),
      ({ body }) => body.pending_count === 0 && body.last_cleanup !== null,
      30_000,
    );
    expect(await ofDevice(system, device)).toEqual([]);
    expect((await post(url('/archive/configure'), { enabled: false })).status).toBe(200);
    const range = {
      start_time: new Date(start - 41 * DAY_MS).toISOString(),
      end_time: new Date(start - 39 * DAY_MS).toISOString(),
    };

    const deleted = await post(url('/data/delete-range'), { ...range, device_name: device });

    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({
      items_deleted: 0,
      archived_items_deleted: 5,
      devices: [{ device_name: device, items_deleted: 0, archived_items_deleted: 5 }],
    });
    expect(await post(url('/data/delete-range'), { ...range, device_name: device })).toMatchObject({
      status: 200,
      body: zeros,
    });

    const restore = await post(url('/archive/restore'), {
      from: range.start_time,
      to: range.end_time,
    });

    expect(restore).toMatchObject({ status: 200, body: { restored: 2 } });
    expect(await ofDevice(system, device)).toEqual([]);
    expect(await ofDevice(system, kept)).toHaveLength(2);

    // The restored device deleted whole: its local items and its archived ones.
    const gone = await post(url('/data/delete-device'), { device_name: kept });
    expect(gone.body).toMatchObject({ items_deleted: 2, archived_items_deleted: 2 });
    const again = await post(url('/archive/restore'), {
      from: range.start_time,
      to: range.end_time,
    });
    expect(again).toMatchObject({ status: 200, body: { restored: 0 } });
    expect(await ofDevice(system, kept)).toEqual([]);
  }, 60_000);
});

import { ConflictError, type ArchiveSettings } from '@screenfleet/contracts';
import type { ContentDocument } from '@screenfleet/storage';
import {
  buildDoc,
  memoryArchiveStore,
  memoryContentStore,
  memoryMedia,
  memoryStateStore,
} from '../../test/memory-ports';
import { createArchiver } from './archive-pass';
import { deleteCaptured, toDeletedCounts, type DeleteDeps } from './delete-data';
import { restoreRange } from './restore';

const start = new Date('2026-03-01T00:00:00Z');
const old = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)); // > 7 days ago
const recent = (seconds: number) => new Date(start.getTime() - 3600_000 + seconds * 1000);
const defaults: ArchiveSettings = { enabled: true, retention_days: 7, storage_limit: 1e12 };
const everything = { from: new Date('2000-01-01T00:00:00Z'), to: new Date('2100-01-01T00:00:00Z') };

function setup(docs: ContentDocument[], extra: Partial<DeleteDeps> = {}) {
  let now = start;
  const clock = {
    now: () => now,
    advance: (ms: number) => (now = new Date(now.getTime() + ms)),
  };
  const content = memoryContentStore(docs);
  const archive = memoryArchiveStore();
  const state = memoryStateStore();
  const deps: DeleteDeps = {
    content,
    archive,
    state,
    defaults,
    chunkSize: 2,
    now: clock.now,
    ...extra,
  };
  const archiver = createArchiver({
    content,
    archive,
    state,
    chunkSize: 3,
    defaults,
    now: clock.now,
  });
  return { content, archive, state, deps, archiver, clock };
}

const ids = (docs: Iterable<ContentDocument>) => [...docs].map((doc) => doc._id).sort();

describe('deleting captured data', () => {
  it('when a range holds more items than a chunk, then they go a chunk at a time, each followed by the pause, and are counted by device and type', async () => {
    const docs = [
      ...[1, 2, 3, 4].map((s) => buildDoc({ timestamp: recent(s), device_name: 'a' })),
      buildDoc({
        timestamp: recent(5),
        device_name: 'b',
        content_type: 'transcription',
        transcription: { text: 'hi', engine: null },
      }),
      buildDoc({ timestamp: recent(9), device_name: 'a' }),
    ];
    const { content, deps } = setup(docs);
    const calls: number[] = [];
    const deleteRange = content.deleteRange.bind(content);
    content.deleteRange = async (range, options) => {
      const deleted = await deleteRange(range, options);
      calls.push(deleted.counts.reduce((n, c) => n + c.items, 0));
      return deleted;
    };

    const paused: number[] = [];
    const afterChunk = (tookMs: number) => {
      paused.push(tookMs);
      return Promise.resolve();
    };

    const report = await deleteCaptured(
      { ...deps, afterChunk },
      { from: recent(0), to: recent(9) },
    );

    expect(calls).toEqual([2, 2, 1]);
    // The composition's pause after each chunk (the store left to producers), told its time.
    expect(paused).toHaveLength(3);
    expect(paused.every((ms) => ms >= 0)).toBe(true);
    expect(ids(content.items.values())).toEqual([docs[5]!._id]);
    expect(toDeletedCounts(report)).toEqual({
      items_deleted: 5,
      frames_deleted: 4,
      audio_transcriptions_deleted: 1,
      media_files_deleted: 0,
      video_files_deleted: 0,
      audio_files_deleted: 0,
      archived_items_deleted: 0,
      archived_objects_unreadable: 0,
      devices: [
        { device_name: 'a', items_deleted: 4, archived_items_deleted: 0 },
        { device_name: 'b', items_deleted: 1, archived_items_deleted: 0 },
      ],
    });
  });

  it('when a range is deleted, then no device is forgotten (each chunk keeps the counters); when a whole device is, then its counters are forgotten once its items are gone', async () => {
    const docs = [
      buildDoc({ timestamp: recent(1), device_name: 'a' }),
      buildDoc({ timestamp: recent(2), device_name: 'b' }),
      buildDoc({ timestamp: recent(8), device_name: 'c' }),
    ];
    const { content, deps } = setup(docs);
    const forgotten: Array<{ device: string; left: number }> = [];
    content.forgetDevice = (device) => {
      const left = [...content.items.values()].filter((doc) => doc.device_name === device);
      forgotten.push({ device, left: left.length });
      return Promise.resolve();
    };

    await deleteCaptured(deps, { from: recent(0), to: recent(5) });
    await deleteCaptured(deps, { device: 'a', from: recent(0) });
    expect(forgotten).toEqual([]);

    await deleteCaptured(deps, { device: 'c' });
    expect(forgotten).toEqual([{ device: 'c', left: 0 }]);
    expect(content.items.size).toBe(0);
  });

  it('when deleted items named media files, then only the files no remaining item names are removed', async () => {
    const media = memoryMedia({ '/media/v1.mp4': 'one', '/media/v2.mp4': 'two' });
    const docs = [
      buildDoc({ timestamp: recent(1), file_path: '/media/v1.mp4' }),
      buildDoc({ timestamp: recent(2), file_path: '/media/v2.mp4' }),
      buildDoc({ timestamp: recent(3), file_path: '/media/v1.mp4' }),
    ];
    const { deps } = setup(docs, { media });

    const report = await deleteCaptured(deps, { from: recent(0), to: recent(3) });

    expect(report.mediaFiles).toBe(1);
    expect([...media.contents.keys()]).toEqual(['/media/v1.mp4']);
  });

  it('when nothing was ever archived, then no deleted range is recorded', async () => {
    const { deps, state } = setup([buildDoc({ timestamp: recent(1) })]);

    await deleteCaptured(deps, { device: 'desk-1' });

    expect(state.current()?.deleted_ranges).toBeUndefined();
  });

  it('when archived items of a range are deleted, then they are counted and recorded once, and a restore brings none back', async () => {
    const docs = [1, 2, 3, 4, 5].map((s) =>
      buildDoc({ timestamp: old(s), device_name: s <= 3 ? 'a' : 'b' }),
    );
    const { deps, archiver, archive, state, content } = setup(docs);
    await archiver.runPass();
    expect(content.items.size).toBe(0);

    const first = await deleteCaptured(deps, { ...everything, device: 'a' });
    const recorded = state.current()!.deleted_ranges;
    const again = await deleteCaptured(deps, { ...everything, device: 'a' });

    expect(toDeletedCounts(first)).toMatchObject({
      items_deleted: 0,
      archived_items_deleted: 3,
      devices: [{ device_name: 'a', items_deleted: 0, archived_items_deleted: 3 }],
    });
    expect(recorded).toEqual([{ ...everything, device_name: 'a', deleted_at: start }]);
    expect(toDeletedCounts(again).archived_items_deleted).toBe(0);
    expect(state.current()!.deleted_ranges).toEqual(recorded);

    const restored = await restoreRange(
      { archive, content, deleted: state.current()!.deleted_ranges! },
      everything,
    );
    expect(restored).toMatchObject({ restored: 2, deletedSkipped: 3 });
    expect(ids(content.items.values())).toEqual(ids(docs.slice(3)));
  });

  it('when items of a deleted range are stored again and archived after the delete, then a restore brings those back', async () => {
    const docs = [1, 2].map((s) => buildDoc({ timestamp: old(s) }));
    const { deps, archiver, archive, state, content, clock } = setup(docs);
    await archiver.runPass();
    await deleteCaptured(deps, everything);
    clock.advance(60_000);
    await content.insertItems(docs); // sent again by a client, after the delete
    await archiver.runPass();

    const restored = await restoreRange(
      { archive, content, deleted: state.current()!.deleted_ranges! },
      everything,
    );

    expect(restored).toMatchObject({ restored: 2, deletedSkipped: 0 });
  });

  it('when the task lease is lost between chunks, then the delete stops with a conflict saying to run it again, and running it again finishes', async () => {
    const docs = [1, 2, 3, 4, 5].map((s) => buildDoc({ timestamp: recent(s) }));
    let checks = 0;
    const { deps, content } = setup(docs, { stillHeld: () => (checks += 1) <= 1 });

    await expect(deleteCaptured(deps, { to: recent(10) })).rejects.toThrow(ConflictError);
    expect(content.items.size).toBe(3);

    await deleteCaptured({ ...deps, stillHeld: () => true }, { to: recent(10) });
    expect(content.items.size).toBe(0);
  });

  it('when an archived chunk cannot be read, then the range is recorded all the same, once, and the object counted as unreadable', async () => {
    const docs = [1, 2].map((s) => buildDoc({ timestamp: old(s) }));
    const { deps, archiver, archive, state } = setup(docs);
    await archiver.runPass();
    const chunk = [...archive.objects.keys()].find((key) => key.startsWith('chunks/'))!;
    archive.objects.delete(chunk);

    const first = await deleteCaptured(deps, everything);
    const again = await deleteCaptured(deps, everything);

    expect(toDeletedCounts(first)).toMatchObject({
      archived_items_deleted: 0,
      archived_objects_unreadable: 1,
    });
    expect(toDeletedCounts(again).archived_objects_unreadable).toBe(1);
    expect(state.current()!.deleted_ranges).toHaveLength(1);
  });

  it('when a range is deleted again while a chunk archived after its first delete cannot be read, then the range is recorded anew, so that chunk stays out once its key is back', async () => {
    const docs = [1, 2].map((s) => buildDoc({ timestamp: old(s) }));
    const { deps, archiver, archive, state, content, clock } = setup(docs);
    await archiver.runPass();
    await deleteCaptured(deps, everything);
    clock.advance(60_000);
    await content.insertItems(docs); // sent again, and archived after the delete
    await archiver.runPass();
    clock.advance(60_000);
    const newer = [...archive.objects.keys()].filter((key) => key.startsWith('chunks/'));
    const hidden = new Map(newer.map((key) => [key, archive.objects.get(key)!]));
    for (const key of newer) archive.objects.delete(key); // its key is not configured now

    const again = await deleteCaptured(deps, everything);
    for (const [key, body] of hidden) archive.objects.set(key, body); // the key is back

    expect(toDeletedCounts(again).archived_objects_unreadable).toBeGreaterThan(0);
    expect(state.current()!.deleted_ranges).toEqual([
      { from: everything.from, to: everything.to, device_name: null, deleted_at: clock.now() },
    ]);
    const restored = await restoreRange(
      { archive, content, deleted: state.current()!.deleted_ranges! },
      everything,
    );
    expect(restored).toMatchObject({ restored: 0, deletedSkipped: 2 });
    expect(content.items.size).toBe(0);
  });
});

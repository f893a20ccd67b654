import {
  renameSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  archiveKeyring,
  createArchiver,
  createLocalMediaFiles,
  createLocalMediaWriter,
  openKeysFor,
  restoreRange,
} from '@screenfleet/archive-worker';
import { archivedKeys, item, openStores, settings, type Stores } from './support';

describe('media files under the media root, against a real directory', () => {
  let base: string;
  let root: string;
  let outside: string;
  let s: Stores | undefined;

  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'sf-media-'));
    root = path.join(base, 'media');
    outside = path.join(base, 'secrets');
    mkdirSync(path.join(root, 'monitor_1'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(path.join(root, 'monitor_1', 'a.mp4'), 'video-a');
    writeFileSync(path.join(outside, 'key.pem'), 'private key');
    // A link inside the root to a file outside it, and one to a directory outside it.
    symlinkSync(path.join(outside, 'key.pem'), path.join(root, 'monitor_1', 'link.mp4'));
    symlinkSync(outside, path.join(root, 'escape'));
  });

  afterEach(async () => {
    await s?.close();
    s = undefined;
    rmSync(base, { recursive: true, force: true });
  });

  it('when paths escape the root by "..", a symlinked file or a symlinked directory, then they are refused and a real file inside is accepted', async () => {
    const media = createLocalMediaFiles(root);

    await expect(media.check(path.join(root, 'monitor_1', 'a.mp4'))).resolves.toMatchObject({
      kind: 'inside',
      size: 7,
    });
    await expect(media.check(`${root}/monitor_1/../../secrets/key.pem`)).resolves.toMatchObject({
      kind: 'refused',
      reason: 'contains ".."',
    });
    await expect(media.check(path.join(root, 'monitor_1', 'link.mp4'))).resolves.toMatchObject({
      kind: 'refused',
    });
    await expect(media.check(path.join(root, 'escape', 'key.pem'))).resolves.toMatchObject({
      kind: 'refused',
    });
    await expect(media.check(path.join(outside, 'key.pem'))).resolves.toMatchObject({
      kind: 'refused',
    });
    await expect(media.check('monitor_1/a.mp4')).resolves.toMatchObject({ kind: 'refused' });
    await expect(media.check(path.join(root, 'nothing.mp4'))).resolves.toEqual({ kind: 'missing' });
    await expect(media.remove(path.join(outside, 'key.pem'))).rejects.toThrow(
      /no longer a file under the media root/,
    );
    expect(readFileSync(path.join(outside, 'key.pem'), 'utf8')).toBe('private key');
  });

  it('when old items name a file by another spelling ("./" or a symlink inside the root) and a newer item names it plainly, then the file stays on disk', async () => {
    s = await openStores('fs');
    const video = path.join(root, 'monitor_1', 'v.mp4');
    writeFileSync(video, 'video-v');
    symlinkSync(video, path.join(root, 'monitor_1', 'alias.mp4'));
    await s.content.insertItems([
      item(20, { file_path: `${root}/monitor_1/./v.mp4` }),
      item(20, { file_path: `${root}//monitor_1/v.mp4` }),
      item(20, { file_path: path.join(root, 'monitor_1', 'alias.mp4') }),
      item(1, { file_path: video }),
    ]);
    const media = createLocalMediaFiles(root);

    const report = await createArchiver({
      content: s.content,
      archive: s.archive,
      state: s.state,
      media,
      chunkSize: 10,
      defaults: settings(),
    }).runPass();

    expect(report).toMatchObject({ outcome: 'done', items: 3, mediaFiles: 0 });
    expect(readFileSync(video, 'utf8')).toBe('video-v');
    await expect(media.check(`${root}/monitor_1/./v.mp4`)).resolves.toMatchObject({
      kind: 'refused',
    });
    await expect(media.check(path.join(root, 'monitor_1', 'alias.mp4'))).resolves.toMatchObject({
      kind: 'refused',
    });
    await expect(media.check(video)).resolves.toMatchObject({ kind: 'inside' });
  });

  it('when media files of a chunk loop, are too long, missing, directories or dangling links, then the pass archives every item, uploads the good file and lists the others in the manifest', async () => {
    s = await openStores('fs');
    const dir = path.join(root, 'monitor_1');
    symlinkSync(path.join(dir, 'loop.mp4'), path.join(dir, 'loop.mp4')); // ELOOP
    symlinkSync(path.join(dir, 'gone.mp4'), path.join(dir, 'dangling.mp4'));
    mkdirSync(path.join(dir, 'folder.mp4'));
    const good = path.join(dir, 'a.mp4');
    const bad = {
      loop: path.join(dir, 'loop.mp4'),
      long: path.join(dir, `${'x'.repeat(300)}.mp4`), // ENAMETOOLONG
      missing: path.join(dir, 'never.mp4'),
      folder: path.join(dir, 'folder.mp4'),
      dangling: path.join(dir, 'dangling.mp4'),
    };
    await s.content.insertItems([
      ...Object.values(bad).map((filePath) => item(20, { file_path: filePath })),
      item(20, { file_path: good }),
    ]);
    const skipped: Array<{ file_path: string; reason: string }> = [];

    const report = await createArchiver({
      content: s.content,
      archive: s.archive,
      state: s.state,
      media: createLocalMediaFiles(root),
      chunkSize: 10,
      defaults: settings(),
      observer: { chunkArchived: () => undefined, mediaSkipped: (file) => skipped.push(file) },
    }).runPass();

    expect(report).toMatchObject({ outcome: 'done', items: 6, mediaFiles: 1 });
    expect(await s.content.countRange({ to: new Date() })).toBe(0);
    expect(existsSync(good)).toBe(false);
    expect(existsSync(bad.folder)).toBe(true);
    const [manifestKey] = await archivedKeys(s.archive, 'manifests/');
    const manifest = JSON.parse(
      (await s.archive.get(manifestKey!)).subarray(5).toString('utf8'),
    ) as { media: Array<{ file_path: string }>; media_skipped: typeof skipped };
    expect(manifest.media.map((m) => m.file_path)).toEqual([good]);
    const reasons = Object.fromEntries(manifest.media_skipped.map((m) => [m.file_path, m.reason]));
    expect(reasons).toEqual({
      [bad.loop]: 'refused',
      [bad.long]: 'refused',
      [bad.missing]: 'missing',
      [bad.folder]: 'refused',
      [bad.dangling]: 'missing',
    });
    expect(manifest.media_skipped.find((m) => m.file_path === bad.loop)).toMatchObject({
      detail: expect.stringMatching(/ELOOP/),
    });
    expect(skipped).toHaveLength(5);
  });

  it('when archived items name files inside and outside the root, then only the inside one is uploaded and deleted; the others are untouched and the items archived', async () => {
    s = await openStores('fs');
    const inside = path.join(root, 'monitor_1', 'a.mp4');
    const docs = [
      item(20, { file_path: inside }),
      item(20, { file_path: path.join(root, 'monitor_1', 'link.mp4') }),
      item(20, { file_path: path.join(root, 'escape', 'key.pem') }),
      item(20, { file_path: `${root}/../secrets/key.pem` }),
      item(20, { file_path: path.join(outside, 'key.pem') }),
    ];
    await s.content.insertItems(docs);

    const report = await createArchiver({
      content: s.content,
      archive: s.archive,
      state: s.state,
      media: createLocalMediaFiles(root),
      chunkSize: 10,
      defaults: settings(),
    }).runPass();

    expect(report).toMatchObject({ outcome: 'done', items: 5, mediaFiles: 1 });
    expect(existsSync(inside)).toBe(false);
    expect(readFileSync(path.join(outside, 'key.pem'), 'utf8')).toBe('private key');
    expect(existsSync(path.join(root, 'monitor_1', 'link.mp4'))).toBe(true);
    const mediaKeys = await archivedKeys(s.archive, 'media/');
    expect(mediaKeys).toHaveLength(1);
    expect(mediaKeys[0]).toMatch(/\/0-[0-9a-f]{64}-a\.mp4\.sfa$/); // content-addressed
    const state = await s.state.load(undefined as never);
    expect(state.counters.media_files_uploaded).toBe(1);
  });

  it('when archived media files are restored, then each comes back to its path, a different file already there is kept, and a second restore finds them in place', async () => {
    s = await openStores('fs');
    const dir = path.join(root, 'monitor_2', 'day');
    mkdirSync(dir, { recursive: true });
    const v1 = path.join(dir, 'v1.mp4');
    const v2 = path.join(dir, 'v2.mp4');
    writeFileSync(v1, 'video-1');
    writeFileSync(v2, 'video-2');
    const docs = [item(20, { file_path: v1 }), item(20, { file_path: v2 })];
    await s.content.insertItems(docs);
    const key = Buffer.alloc(32, 7);
    await createArchiver({
      content: s.content,
      archive: s.archive,
      state: s.state,
      media: createLocalMediaFiles(root),
      keyring: archiveKeyring([key]),
      chunkSize: 10,
      defaults: settings(),
    }).runPass();
    expect(existsSync(v1) || existsSync(v2)).toBe(false);
    rmSync(path.join(root, 'monitor_2'), { recursive: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(v2, 'someone else'); // a different file now in v2's place
    const restore = () =>
      restoreRange(
        {
          archive: s!.archive,
          content: s!.content,
          keys: openKeysFor(archiveKeyring([key])),
          media: createLocalMediaWriter(root),
        },
        { from: new Date(0), to: new Date() },
      );

    const first = await restore();
    const second = await restore();

    expect(first).toMatchObject({ restored: 2, media: { written: 1, conflict: 1 } });
    expect(second).toMatchObject({ alreadyStored: 2, media: { already: 1, conflict: 1 } });
    expect(readFileSync(v1, 'utf8')).toBe('video-1');
    expect(readFileSync(v2, 'utf8')).toBe('someone else');
  });

  it('when a media path to restore leads out of the root, then nothing is written there', async () => {
    symlinkSync(outside, path.join(root, 'out'));
    const writer = createLocalMediaWriter(root);

    await expect(writer.restore(path.join(root, 'out', 'x.mp4'), Buffer.from('x'))).resolves.toBe(
      'refused',
    );
    await expect(writer.restore(path.join(outside, 'y.mp4'), Buffer.from('y'))).resolves.toBe(
      'refused',
    );
    await expect(writer.restore(`${root}/a/../../secrets/z.mp4`, Buffer.from('z'))).resolves.toBe(
      'refused',
    );
    expect(existsSync(path.join(outside, 'x.mp4'))).toBe(false);
    expect(existsSync(path.join(outside, 'y.mp4'))).toBe(false);
  });

  it('when the media root is replaced after start (an unmounted volume), then the pass fails and no item leaves', async () => {
    s = await openStores('fs');
    await s.content.insertItems([item(20, { file_path: path.join(root, 'monitor_1', 'a.mp4') })]);
    const media = createLocalMediaFiles(root);
    renameSync(root, `${root}-mounted`);
    mkdirSync(root); // the empty mount point left behind

    const report = await createArchiver({
      content: s.content,
      archive: s.archive,
      state: s.state,
      media,
      chunkSize: 10,
      defaults: settings(),
    }).runPass();

    expect(report).toMatchObject({ outcome: 'failed', items: 0 });
    expect(report.error).toMatch(/not the directory it was at start/);
    expect(await s.content.countRange({ to: new Date() })).toBe(1);
    expect(await archivedKeys(s.archive, 'chunks/')).toEqual([]);
  });
});

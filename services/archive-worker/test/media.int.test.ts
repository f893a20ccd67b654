import {
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
import { createArchiver, createLocalMediaFiles } from '@screenfleet/archive-worker';
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
});

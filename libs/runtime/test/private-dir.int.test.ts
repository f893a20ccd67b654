import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensurePrivateDir, ensurePrivateFile } from '@screenfleet/runtime';

// Real directories in a temp folder; the test process runs with umask 022 like a shell's.
const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('private directories and files (data at rest only for its owner)', () => {
  let parent: string;
  const umask = process.umask(0o022);

  beforeEach(() => {
    parent = mkdtempSync(path.join(os.tmpdir(), 'sf-private-'));
  });
  afterEach(() => rmSync(parent, { recursive: true, force: true }));
  afterAll(() => process.umask(umask));

  it('when the directory and its parents are missing, then each is created 0700', () => {
    const dir = path.join(parent, 'a', 'data');

    ensurePrivateDir(dir, 'data directory');

    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(path.join(parent, 'a'))).toBe(0o700);
  });

  it('when the directory exists and only its owner may use it, then it is accepted as it is', () => {
    const dir = path.join(parent, 'data');
    mkdirSync(dir, { mode: 0o700 });

    expect(() => ensurePrivateDir(dir, 'data directory')).not.toThrow();
    expect(modeOf(dir)).toBe(0o700);
  });

  it.each([0o755, 0o750, 0o711, 0o701, 0o770])(
    'when the directory exists with mode %o, then it is refused with the fix, and left as it is',
    (mode) => {
      const dir = path.join(parent, 'data');
      mkdirSync(dir);
      chmodSync(dir, mode);

      expect(() => ensurePrivateDir(dir, 'data directory (DATA_DIR)')).toThrow(
        `data directory (DATA_DIR) ${dir} is open to other users (mode ${mode.toString(8)}): run chmod 700 ${dir}`,
      );
      expect(modeOf(dir)).toBe(mode);
    },
  );

  it('when the path is a file, then it is refused saying so', () => {
    const file = path.join(parent, 'data');
    writeFileSync(file, '');

    expect(() => ensurePrivateDir(file, 'data directory')).toThrow(
      `data directory ${file} is not a directory`,
    );
  });

  it('when a private file is missing, then it is created empty with mode 0600; an existing one is left as it is', () => {
    const file = path.join(parent, 'screenfleet.db');

    ensurePrivateFile(file);
    expect(modeOf(file)).toBe(0o600);
    expect(statSync(file).size).toBe(0);

    writeFileSync(file, 'kept');
    ensurePrivateFile(file);
    expect(statSync(file).size).toBe(4);
  });
});

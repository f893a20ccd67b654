import { ValidationError } from '@screenfleet/contracts';
import { checkArchiveKey, checkArchivePrefix, checkSha256 } from './archive-key';

describe('checkArchiveKey', () => {
  it.each([
    'a',
    'chunks/2026/11/22/0001.json.gz',
    'media/laptop 7/écran ✓/10:00:00.mp4',
    'a..b/c.d',
    'x'.repeat(1024),
  ])('when the key is %j, then it is accepted', (key) => {
    expect(() => checkArchiveKey(key)).not.toThrow();
  });

  it.each([
    ['empty', ''],
    ['a parent segment', '../x'],
    ['an inner parent segment', 'a/../../x'],
    ['a current segment', 'a/./b'],
    ['a hidden segment', 'a/.partial'],
    ['absolute', '/etc/passwd'],
    ['a backslash', 'a\\b'],
    ['NUL', 'a\u0000b'],
    ['a newline', 'a\nb'],
    ['an empty segment', 'a//b'],
    ['a trailing slash', 'a/'],
    ['too long', 'x'.repeat(1025)],
    ['too long in bytes', 'é'.repeat(513)],
  ])('when the key has %s, then ValidationError names the key', (_name, key) => {
    let error: unknown;
    try {
      checkArchiveKey(key);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fieldErrors).toEqual([
      { path: 'key', rule: 'pattern', detail: expect.stringMatching(/^key /) as string },
    ]);
  });
});

describe('checkArchivePrefix', () => {
  it.each(['', 'a', 'a/', 'chunks/2026/1', 'a/b/'])(
    'when the prefix is %j, then it is accepted',
    (prefix) => {
      expect(() => checkArchivePrefix(prefix)).not.toThrow();
    },
  );

  it.each(['/', '../', 'a/../', '.', 'a/.', 'a\\', 'a//'])(
    'when the prefix is %j, then it is refused',
    (prefix) => {
      expect(() => checkArchivePrefix(prefix)).toThrow(ValidationError);
    },
  );
});

describe('checkSha256', () => {
  it('when it is 64 lowercase hex digits, then it is accepted, else refused', () => {
    expect(() => checkSha256('0123456789abcdef'.repeat(4))).not.toThrow();
    expect(() => checkSha256('0123456789ABCDEF'.repeat(4))).toThrow(ValidationError);
    expect(() => checkSha256('abc')).toThrow(ValidationError);
  });
});

import { matchesDevicePattern } from './device-pattern';

describe('matchesDevicePattern', () => {
  it.each([
    ['desk-*', 'desk-17', true],
    ['desk-*', 'desk-', true],
    ['desk-*', 'lab-desk-17', false],
    ['desk-??', 'desk-17', true],
    ['desk-??', 'desk-1', false],
    ['desk-??', 'desk-170', false],
    ['*', 'anything at all', true],
    ['*', '', true],
    ['laptop', 'laptop', true],
    ['laptop', 'laptop2', false],
    ['laptop', 'my laptop', false],
    ['*-lab-*', 'a-lab-b', true],
    ['*-lab-*', 'a-lab', false],
  ])('when the pattern is %j and the name %j, then it matches: %s', (pattern, name, expected) => {
    expect(matchesDevicePattern(pattern, name)).toBe(expected);
  });

  it.each([
    ['desk.1', 'desk.1', true],
    ['desk.1', 'deskX1', false],
    ['a+b', 'a+b', true],
    ['a+b', 'aab', false],
    ['(x)|y', '(x)|y', true],
    ['(x)|y', 'y', false],
    ['[ab]', '[ab]', true],
    ['[ab]', 'a', false],
    ['c:\\d', 'c:\\d', true],
    ['c:\\d', 'c:5', false],
    ['^$', '^$', true],
    ['a{2}', 'a{2}', true],
    ['a{2}', 'aa', false],
    ['x/y-z', 'x/y-z', true],
  ])(
    'when the pattern %j holds regular-expression characters, then they are literal: %j matches %s',
    (pattern, name, expected) => {
      expect(matchesDevicePattern(pattern, name)).toBe(expected);
    },
  );

  it('when a name holds characters beyond ASCII, then `?` stands for one of them and the rest is literal', () => {
    expect(matchesDevicePattern('bureau-?', 'bureau-é')).toBe(true);
    expect(matchesDevicePattern('desk-?', 'desk-🖥')).toBe(true);
    expect(matchesDevicePattern('désk-*', 'désk-1')).toBe(true);
    expect(matchesDevicePattern('désk-*', 'desk-1')).toBe(false);
  });

  it('when the name holds a line break, then `*` spans it and a literal pattern still covers the whole name', () => {
    expect(matchesDevicePattern('a*b', 'a\nb')).toBe(true);
    expect(matchesDevicePattern('a', 'a\n')).toBe(false);
  });
});

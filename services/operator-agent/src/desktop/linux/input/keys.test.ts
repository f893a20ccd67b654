import { keyNames, ValidationError, type KeyName, type ModifierName } from '@screenfleet/contracts';
import { nutKeys, nutModifiers, toNutKeys } from './keys';

describe('keys', () => {
  test('when every canonical key is mapped, then each has a nut-js name', () => {
    for (const key of keyNames) expect(nutKeys[key]).toMatch(/^[A-Z][A-Za-z0-9]*$/);
    expect(nutKeys.enter).toBe('Return');
    expect(nutKeys['7']).toBe('Num7');
    expect(nutKeys.f12).toBe('F12');
    expect(nutModifiers.meta).toBe('LeftSuper');
  });

  test('when a name is unknown, then nothing is pressed and the error names it', () => {
    expect(() => toNutKeys('return' as KeyName, ['shift'])).toThrow(ValidationError);
    expect(() => toNutKeys('a', ['cmd' as ModifierName])).toThrow(ValidationError);
    expect(toNutKeys('a', ['shift', 'shift', 'ctrl']).modifiers).toEqual([
      'LeftShift',
      'LeftControl',
    ]);
  });
});

import { keyNames, modifierNames as contractModifiers } from '@screenfleet/contracts';
import { comboText, modifierNames, namedKeySuggestions } from './operator-keys';

describe("the Operator view's key names", () => {
  it('when the modifiers are offered, then they are exactly the canonical ones of the contracts', () => {
    expect([...modifierNames]).toEqual([...contractModifiers]);
  });

  it('when named keys are suggested, then each is a canonical key name', () => {
    for (const key of namedKeySuggestions) expect(keyNames).toContain(key);
  });

  it('when a combination is written, then modifiers come first', () => {
    expect(comboText('k', ['ctrl', 'shift'])).toBe('ctrl+shift+k');
    expect(comboText('enter', [])).toBe('enter');
  });
});

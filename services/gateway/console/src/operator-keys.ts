/**
 * Names the Operator view offers for a key press. The one home of key names is
 * libs/contracts/src/keys.ts (the gateway checks every name and answers 400 with the allowed
 * ones); the console cannot import it at run time, so these are restated and
 * operator-keys.test.ts holds them to it.
 */
export const modifierNames = ['ctrl', 'shift', 'alt', 'meta'] as const;
export type ModifierName = (typeof modifierNames)[number];

export const modifierLabels: Record<ModifierName, string> = {
  ctrl: 'Ctrl',
  shift: 'Shift',
  alt: 'Alt (Option)',
  meta: 'Meta (Cmd, Win)',
};

/** Suggested in the key field besides letters, digits and F1-F24, which any name accepts. */
export const namedKeySuggestions = [
  'enter',
  'tab',
  'escape',
  'space',
  'backspace',
  'delete',
  'up',
  'down',
  'left',
  'right',
  'home',
  'end',
  'pageup',
  'pagedown',
] as const;

/** A key with its modifiers as people write it: "ctrl+shift+k". */
export const comboText = (key: string, modifiers: readonly string[]): string =>
  [...modifiers, key].join('+');

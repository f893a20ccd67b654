import type { KeyName, ModifierName } from '../desktop';

/**
 * Canonical key names -> names of nut-js's `Key` enum. Strings, not enum values, so this file
 * loads without nut-js (which must not load before the display is checked).
 */
export type NutKeyName = string;

const SPECIAL_KEYS: Record<string, NutKeyName> = {
  // Key.Enter arrives as NumpadEnter in applications; Return is the main Enter key.
  enter: 'Return',
  tab: 'Tab',
  escape: 'Escape',
  space: 'Space',
  backspace: 'Backspace',
  delete: 'Delete',
  up: 'Up',
  down: 'Down',
  left: 'Left',
  right: 'Right',
  home: 'Home',
  end: 'End',
  pageup: 'PageUp',
  pagedown: 'PageDown',
  insert: 'Insert',
};

// Right-hand modifiers arrive as left-hand ones anyway; Super is what X calls the meta key.
const MODIFIER_KEYS: Record<ModifierName, NutKeyName> = {
  ctrl: 'LeftControl',
  shift: 'LeftShift',
  alt: 'LeftAlt',
  meta: 'LeftSuper',
};

export function nutKeyName(key: KeyName): NutKeyName {
  if (/^[a-z]$/.test(key)) return key.toUpperCase();
  if (/^[0-9]$/.test(key)) return `Num${key}`;
  if (/^f([1-9]|1[0-9]|2[0-4])$/.test(key)) return key.toUpperCase();
  const special = SPECIAL_KEYS[key];
  if (special === undefined) throw new Error(`No nut-js key for '${key}'`);
  return special;
}

export function nutModifierName(modifier: ModifierName): NutKeyName {
  return MODIFIER_KEYS[modifier];
}

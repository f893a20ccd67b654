/**
 * Key and modifier names for the operator's key presses: case-insensitive, with aliases, so
 * both the spec's {key, modifiers} and screenpipe's key_combo ("cmd+a", "return") resolve to one
 * canonical name each. Desktop adapters map canonical names to their platform's keys.
 */

/** Canonical key names: letters, digits, F1-F24 and the named keys. */
// prettier-ignore
export const keyNames = [
  'a',
  'b',
  'c',
  'd',
  'e',
  'f',
  'g',
  'h',
  'i',
  'j',
  'k',
  'l',
  'm',
  'n',
  'o',
  'p',
  'q',
  'r',
  's',
  't',
  'u',
  'v',
  'w',
  'x',
  'y',
  'z',
  '0',
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  '7',
  '8',
  '9',
  'f1',
  'f2',
  'f3',
  'f4',
  'f5',
  'f6',
  'f7',
  'f8',
  'f9',
  'f10',
  'f11',
  'f12',
  'f13',
  'f14',
  'f15',
  'f16',
  'f17',
  'f18',
  'f19',
  'f20',
  'f21',
  'f22',
  'f23',
  'f24',
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
  'insert',
] as const;
export const modifierNames = ['ctrl', 'shift', 'alt', 'meta'] as const;

export type KeyName = (typeof keyNames)[number];
export type ModifierName = (typeof modifierNames)[number];

const keyAliases: Record<string, KeyName> = {
  return: 'enter',
  esc: 'escape',
  del: 'delete',
  arrowup: 'up',
  arrowdown: 'down',
  arrowleft: 'left',
  arrowright: 'right',
  pgup: 'pageup',
  pgdn: 'pagedown',
  ins: 'insert',
  spacebar: 'space',
};

const modifierAliases: Record<string, ModifierName> = {
  ctrl: 'ctrl',
  control: 'ctrl',
  shift: 'shift',
  alt: 'alt',
  option: 'alt',
  opt: 'alt',
  meta: 'meta',
  cmd: 'meta',
  command: 'meta',
  super: 'meta',
  win: 'meta',
  windows: 'meta',
};

const knownKeys = new Set<string>(keyNames);

/** The canonical key name, or undefined when the name is not allowed. */
export function toKeyName(name: string): KeyName | undefined {
  const lower = name.trim().toLowerCase();
  const canonical = keyAliases[lower] ?? lower;
  return knownKeys.has(canonical) ? (canonical as KeyName) : undefined;
}

export function toModifierName(name: string): ModifierName | undefined {
  return modifierAliases[name.trim().toLowerCase()];
}

export const allowedKeysText =
  'a-z, 0-9, f1-f24, enter (return), tab, escape (esc), space, backspace, delete (del), ' +
  'up, down, left, right (arrowup...), home, end, pageup, pagedown, insert';
export const allowedModifiersText =
  'ctrl (control), shift, alt (option), meta (cmd, command, super, win)';

export interface KeyCombo {
  key: KeyName;
  modifiers: ModifierName[];
}

/** Resolves key and modifier names (any case, aliases) to canonical ones; undefined if any is not allowed. */
export function resolveKeyCombo(key: string, modifiers: readonly string[]): KeyCombo | undefined {
  const canonicalKey = toKeyName(key);
  const canonicalModifiers = modifiers.map(toModifierName);
  if (canonicalKey === undefined || canonicalModifiers.some((m) => m === undefined))
    return undefined;
  return { key: canonicalKey, modifiers: [...new Set(canonicalModifiers as ModifierName[])] };
}

/** Parses screenpipe's key_combo: modifiers and one key joined by "+" ("cmd+shift+a", "return"). */
export function parseKeyCombo(combo: string): KeyCombo | undefined {
  const parts = combo.split('+');
  const keyPart = parts.pop();
  return keyPart === undefined ? undefined : resolveKeyCombo(keyPart, parts);
}

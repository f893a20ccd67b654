/**
 * Desktop.pressKey on Linux: the contract's canonical key names (libs/contracts keys.ts) as
 * nut-js `Key` names (nut.input.ts's NutKey), held and released in order by the input child,
 * then paced before the next focus (input-pacing.ts). The map is typed both ways: a contract
 * name missing here, or a nut-js name that does not exist, does not compile.
 */
import { checkResolvedKeyCombo, type KeyName, type ModifierName } from '@screenfleet/contracts';
import type { CallOptions } from '../../desktop';
import type { InputPacing } from './input-pacing';
import { pressWithModifiers, type NutInput, type NutKey } from './nut.input';

export const nutKeys: Readonly<Record<KeyName, NutKey>> = {
  a: 'A',
  b: 'B',
  c: 'C',
  d: 'D',
  e: 'E',
  f: 'F',
  g: 'G',
  h: 'H',
  i: 'I',
  j: 'J',
  k: 'K',
  l: 'L',
  m: 'M',
  n: 'N',
  o: 'O',
  p: 'P',
  q: 'Q',
  r: 'R',
  s: 'S',
  t: 'T',
  u: 'U',
  v: 'V',
  w: 'W',
  x: 'X',
  y: 'Y',
  z: 'Z',
  // The digit row, not the keypad.
  '0': 'Num0',
  '1': 'Num1',
  '2': 'Num2',
  '3': 'Num3',
  '4': 'Num4',
  '5': 'Num5',
  '6': 'Num6',
  '7': 'Num7',
  '8': 'Num8',
  '9': 'Num9',
  f1: 'F1',
  f2: 'F2',
  f3: 'F3',
  f4: 'F4',
  f5: 'F5',
  f6: 'F6',
  f7: 'F7',
  f8: 'F8',
  f9: 'F9',
  f10: 'F10',
  f11: 'F11',
  f12: 'F12',
  f13: 'F13',
  f14: 'F14',
  f15: 'F15',
  f16: 'F16',
  f17: 'F17',
  f18: 'F18',
  f19: 'F19',
  f20: 'F20',
  f21: 'F21',
  f22: 'F22',
  f23: 'F23',
  f24: 'F24',
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
export const nutModifiers: Readonly<Record<ModifierName, NutKey>> = {
  ctrl: 'LeftControl',
  shift: 'LeftShift',
  alt: 'LeftAlt',
  meta: 'LeftSuper',
};

/**
 * The nut-js keys for a press. The command arrives with canonical names (the gateway resolved
 * them); this runs remote input, so a name outside the contract's table is still refused here,
 * before anything goes down (ValidationError), rather than looked up blindly.
 */
export function toNutKeys(
  key: KeyName,
  modifiers: readonly ModifierName[],
): { key: NutKey; modifiers: NutKey[] } {
  const combo = checkResolvedKeyCombo(key, modifiers);
  return { key: nutKeys[combo.key], modifiers: combo.modifiers.map((m) => nutModifiers[m]) };
}

export interface PressKeyDeps {
  input: Pick<NutInput, 'withKeyboard'>;
  pacing: Pick<InputPacing, 'taken'>;
}

export async function pressKey(
  deps: PressKeyDeps,
  key: KeyName,
  modifiers: ModifierName[],
  options: CallOptions,
): Promise<void> {
  const keys = toNutKeys(key, modifiers);
  await deps.input.withKeyboard(
    (keyboard) => pressWithModifiers(keyboard, keys.key, keys.modifiers),
    options,
  );
  await deps.pacing.taken(options.deadline);
}

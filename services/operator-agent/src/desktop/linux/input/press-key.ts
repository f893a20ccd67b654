/**
 * Desktop.pressKey on Linux: the contract's key names as nut-js keys (keys.ts), held and
 * released in order by the input child (nut.input.ts), then paced before the next focus.
 */
import type { CallOptions, KeyName, ModifierName } from '../../desktop';
import type { InputPacing } from './input-pacing';
import { toNutKeys } from './keys';
import { pressWithModifiers, type NutInput } from './nut.input';

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

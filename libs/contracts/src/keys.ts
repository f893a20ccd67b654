/**
 * The key and modifier names of the operator's key presses: this table is the one home of them.
 * Clients send any case and the aliases below, in the spec's {key, modifiers} or screenpipe's
 * key_combo ("cmd+a", "return"); the request schema checks them (the x-key-name keyword reads
 * `keyNameRules`), the gateway resolves them once (`resolvePressKey`) to the canonical names the
 * signed command carries, and the agent maps those to its platform's keys (a map keyed by
 * KeyName and ModifierName, so a name without a platform key does not compile).
 */
import { ValidationError, type FieldError } from './errors';

// prettier-ignore
const letterKeys = [
  'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm',
  'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z',
] as const;
// prettier-ignore
const digitKeys = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'] as const;
// prettier-ignore
const functionKeys = [
  'f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'f9', 'f10', 'f11', 'f12',
  'f13', 'f14', 'f15', 'f16', 'f17', 'f18', 'f19', 'f20', 'f21', 'f22', 'f23', 'f24',
] as const;

/** The named keys, each with the other names clients send for it. */
const namedKeys = {
  enter: ['return'],
  tab: [],
  escape: ['esc'],
  space: ['spacebar'],
  backspace: [],
  delete: ['del'],
  up: ['arrowup'],
  down: ['arrowdown'],
  left: ['arrowleft'],
  right: ['arrowright'],
  home: [],
  end: [],
  pageup: ['pgup'],
  pagedown: ['pgdn'],
  insert: ['ins'],
} as const satisfies Record<string, readonly string[]>;

/** The modifiers, each with the other names clients send for it (macOS and Windows words). */
const modifiers = {
  ctrl: ['control'],
  shift: [],
  alt: ['option', 'opt'],
  meta: ['cmd', 'command', 'super', 'win', 'windows'],
} as const satisfies Record<string, readonly string[]>;

export type KeyName =
  | (typeof letterKeys)[number]
  | (typeof digitKeys)[number]
  | (typeof functionKeys)[number]
  | keyof typeof namedKeys;
export type ModifierName = keyof typeof modifiers;

/** Canonical key names: letters, digits, F1-F24 and the named keys. */
export const keyNames: readonly KeyName[] = [
  ...letterKeys,
  ...digitKeys,
  ...functionKeys,
  ...(Object.keys(namedKeys) as Array<keyof typeof namedKeys>),
];
export const modifierNames = Object.keys(modifiers) as readonly ModifierName[];

/** Every name a client may send (lower case) -> its canonical name. */
function lookup<Name extends string>(
  canonical: readonly Name[],
  aliases: Partial<Record<Name, readonly string[]>>,
): Map<string, Name> {
  const byName = new Map<string, Name>(canonical.map((name) => [name, name]));
  for (const name of canonical) for (const alias of aliases[name] ?? []) byName.set(alias, name);
  return byName;
}
const keyByName = lookup<KeyName>(keyNames, namedKeys);
const modifierByName = lookup<ModifierName>(modifierNames, modifiers);

/** The canonical key name (any case, aliases), or undefined when the name is not allowed. */
export function toKeyName(name: string): KeyName | undefined {
  return keyByName.get(name.trim().toLowerCase());
}

export function toModifierName(name: string): ModifierName | undefined {
  return modifierByName.get(name.trim().toLowerCase());
}

const withAliases = (table: Record<string, readonly string[]>): string[] =>
  Object.entries(table).map(([name, aliases]) =>
    aliases.length > 0 ? `${name} (${aliases.join(', ')})` : name,
  );
const allowedKeysText = ['a-z, 0-9, f1-f24', ...withAliases(namedKeys)].join(', ');
const allowedModifiersText = withAliases(modifiers).join(', ');

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

export type KeyNameKind = 'key' | 'modifier' | 'combo';

/**
 * The names a press request carries: PressKeyRequest's fields (http/operator.routes.ts), written
 * here rather than imported, since that module compiles its validator with validate.ts, which
 * reads keyNameRules from this one (an import back would close a loop).
 */
export interface PressKeyNames {
  key?: string | undefined;
  modifiers?: readonly string[] | null | undefined;
  key_combo?: string | undefined;
}

/**
 * What the request schema's x-key-name keyword accepts for each kind of field, and how its 400
 * names what is allowed (validate.ts words the detail from these).
 */
export const keyNameRules: Record<
  KeyNameKind,
  { valid: (name: string) => boolean; what: string; allowed: string }
> = {
  key: { valid: (name) => toKeyName(name) !== undefined, what: 'key', allowed: allowedKeysText },
  modifier: {
    valid: (name) => toModifierName(name) !== undefined,
    what: 'modifier',
    allowed: allowedModifiersText,
  },
  combo: {
    valid: (name) => parseKeyCombo(name) !== undefined,
    what: 'key combination',
    allowed: `modifiers joined to one key by "+" (e.g. "cmd+a", "return"); modifiers: ${allowedModifiersText}; keys: ${allowedKeysText}`,
  },
};

/**
 * Both request shapes (spec {key, modifiers}, screenpipe SDK {key_combo}) as canonical names:
 * the one resolution, done by the gateway on a request the schema accepted. A name the schema
 * would have refused is a ValidationError naming the field, never a guess.
 */
export function resolvePressKey(request: PressKeyNames): KeyCombo {
  const combo =
    request.key_combo !== undefined
      ? parseKeyCombo(request.key_combo)
      : resolveKeyCombo(request.key ?? '', request.modifiers ?? []);
  if (combo) return combo;
  throw new ValidationError('invalid press: a key name is not allowed', [unresolved(request)]);
}

/** Which field of a press request holds a name that does not resolve. */
function unresolved(request: PressKeyNames): FieldError {
  const refused = (path: string, kind: KeyNameKind): FieldError => ({
    path,
    rule: 'allowed-values',
    detail: `${path} is not an allowed ${keyNameRules[kind].what}; allowed: ${keyNameRules[kind].allowed}`,
  });
  if (request.key_combo !== undefined) return refused('key_combo', 'combo');
  const modifier = (request.modifiers ?? []).findIndex((m) => toModifierName(m) === undefined);
  return modifier >= 0 ? refused(`modifiers[${modifier}]`, 'modifier') : refused('key', 'key');
}

const canonicalKeys = new Set<string>(keyNames);
const canonicalModifiers = new Set<string>(modifierNames);

/**
 * For code handed names already resolved (the agent, which runs remote input): the combo when
 * every name is canonical (an alias such as "return" or "cmd" is not), with the modifiers
 * unique; otherwise a ValidationError naming each bad field, before anything is pressed.
 */
export function checkResolvedKeyCombo(key: string, modifiers: readonly string[]): KeyCombo {
  const errors: FieldError[] = [];
  if (!canonicalKeys.has(key)) {
    errors.push({ path: 'key', rule: 'allowed-values', detail: `unknown key name '${key}'` });
  }
  modifiers.forEach((modifier, i) => {
    if (!canonicalModifiers.has(modifier)) {
      errors.push({
        path: `modifiers[${i}]`,
        rule: 'allowed-values',
        detail: `unknown modifier '${modifier}' (allowed: ${modifierNames.join(', ')})`,
      });
    }
  });
  if (errors.length > 0) throw new ValidationError('Invalid key press', errors);
  return { key: key as KeyName, modifiers: [...new Set(modifiers as ModifierName[])] };
}

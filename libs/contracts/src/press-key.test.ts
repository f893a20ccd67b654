import {
  checkResolvedKeyCombo,
  createEnvelope,
  parseKeyCombo,
  resolvePressKey,
  toKeyName,
  toModifierName,
  ValidationError,
  validators,
  type FieldError,
} from './index';

const errorsOf = (data: unknown): Array<Pick<FieldError, 'path' | 'rule'>> =>
  validators.pressKeyRequest.check(data).map(({ path, rule }) => ({ path, rule }));

describe('press-key request contract', () => {
  it.each([
    ['the spec shape', { element_index: 1, key: 'a', modifiers: ['ctrl', 'shift'] }],
    ['the spec shape without modifiers', { element_index: 0, key: 'Enter' }],
    ['null modifiers', { element_index: 0, key: 'Tab', modifiers: null }],
    ["screenpipe SDK's key_combo", { element_index: 3, key_combo: 'cmd+a' }],
    ['key_combo return', { element_index: 3, key_combo: 'return' }],
    ['a device name', { element_index: 3, key: 'F5', device_name: 'desk-2' }],
    [
      'a cache_id with the spec shape',
      { element_index: 3, key: 'a', cache_id: '0f8fad5b-d9cb-469f-a165-70867728950e' },
    ],
    ['a cache_id with key_combo', { element_index: 3, key_combo: 'cmd+a', cache_id: 'abc_123' }],
    ['a null cache_id', { element_index: 3, key: 'a', cache_id: null }],
    [
      'aliases in any case',
      { element_index: 2, key: 'ESC', modifiers: ['Control', 'OPTION', 'Win'] },
    ],
  ])('when the body is %s, then it is accepted', (_, body) => {
    expect(validators.pressKeyRequest.check(body)).toEqual([]);
  });

  it.each<[string, unknown, Array<Pick<FieldError, 'path' | 'rule'>>]>([
    ['no element_index', { key: 'a' }, [{ path: 'element_index', rule: 'required' }]],
    [
      'a negative index',
      { element_index: -1, key: 'a' },
      [{ path: 'element_index', rule: 'minimum' }],
    ],
    [
      'a fractional index',
      { element_index: 1.5, key: 'a' },
      [{ path: 'element_index', rule: 'type' }],
    ],
    [
      'an index as a string',
      { element_index: '1', key: 'a' },
      [{ path: 'element_index', rule: 'type' }],
    ],
    ['no key and no key_combo', { element_index: 1 }, [{ path: 'key', rule: 'required' }]],
    [
      'an unknown key',
      { element_index: 1, key: 'hyper' },
      [{ path: 'key', rule: 'allowed-values' }],
    ],
    [
      'an unknown modifier',
      { element_index: 1, key: 'a', modifiers: ['fn'] },
      [{ path: 'modifiers[0]', rule: 'allowed-values' }],
    ],
    [
      // A lookup in a plain object found Object.prototype.constructor here and let it through.
      'a modifier named after an Object.prototype member',
      { element_index: 1, key: 'a', modifiers: ['constructor'] },
      [{ path: 'modifiers[0]', rule: 'allowed-values' }],
    ],
    [
      'modifiers as a string',
      { element_index: 1, key: 'a', modifiers: 'ctrl' },
      [{ path: 'modifiers', rule: 'type' }],
    ],
    [
      'an unknown key in key_combo',
      { element_index: 1, key_combo: 'cmd+hyper' },
      [{ path: 'key_combo', rule: 'allowed-values' }],
    ],
    [
      'a cache_id with spaces',
      { element_index: 1, key: 'a', cache_id: 'not an id' },
      [{ path: 'cache_id', rule: 'pattern' }],
    ],
    [
      'a cache_id too long',
      { element_index: 1, key: 'a', cache_id: 'a'.repeat(65) },
      [{ path: 'cache_id', rule: 'maxLength' }],
    ],
    [
      'an empty cache_id',
      { element_index: 1, key: 'a', cache_id: '' },
      [{ path: 'cache_id', rule: 'pattern' }],
    ],
    [
      'both key and key_combo',
      { element_index: 1, key: 'a', key_combo: 'cmd+a' },
      [{ path: '', rule: 'not' }],
    ],
  ])('when the body has %s, then it is refused naming the field and rule', (_, body, expected) => {
    expect(errorsOf(body)).toEqual(expected);
  });

  it('when a key is unknown, then the detail lists the allowed keys', () => {
    const [error] = validators.pressKeyRequest.check({ element_index: 1, key: 'hyper' });
    expect(error?.detail).toMatch(
      /^key "hyper" is not an allowed key; allowed: a-z, 0-9, f1-f24, enter/,
    );
  });
});

describe('key names', () => {
  it.each([
    ['a', 'a'],
    ['Z', 'z'],
    ['7', '7'],
    ['F24', 'f24'],
    ['Return', 'enter'],
    ['esc', 'escape'],
    ['ArrowLeft', 'left'],
    ['PageDown', 'pagedown'],
  ])('when the key is %s, then its canonical name is %s', (name, canonical) => {
    expect(toKeyName(name)).toBe(canonical);
  });

  it.each(['f25', 'ctrl', '', 'ab', '+'])(
    'when the key is "%s", then it is not allowed',
    (name) => {
      expect(toKeyName(name)).toBeUndefined();
    },
  );

  it.each([
    ['control', 'ctrl'],
    ['Option', 'alt'],
    ['cmd', 'meta'],
    ['super', 'meta'],
  ])('when the modifier is %s, then it is %s', (name, canonical) => {
    expect(toModifierName(name)).toBe(canonical);
  });

  it('when a key_combo is parsed, then modifiers and key are canonical and unique', () => {
    expect(parseKeyCombo('cmd+a')).toEqual({ key: 'a', modifiers: ['meta'] });
    expect(parseKeyCombo('Ctrl+Shift+ctrl+Tab')).toEqual({
      key: 'tab',
      modifiers: ['ctrl', 'shift'],
    });
    expect(parseKeyCombo('return')).toEqual({ key: 'enter', modifiers: [] });
    expect(parseKeyCombo('a+ctrl')).toBeUndefined();
    expect(parseKeyCombo('ctrl+')).toBeUndefined();
  });
});

describe('resolving a press request (the gateway, once)', () => {
  it('when either request shape is used, then keys and modifiers are canonical', () => {
    expect(resolvePressKey({ key_combo: 'CMD+Shift+Return' })).toEqual({
      key: 'enter',
      modifiers: ['meta', 'shift'],
    });
    expect(resolvePressKey({ key: 'ESC', modifiers: ['Control', 'ctrl', 'option'] })).toEqual({
      key: 'escape',
      modifiers: ['ctrl', 'alt'],
    });
    expect(resolvePressKey({ key: 'a', modifiers: null })).toEqual({ key: 'a', modifiers: [] });
  });

  it('when a name does not resolve, then it is a ValidationError naming the field, never a guess', () => {
    const fieldOf = (request: Parameters<typeof resolvePressKey>[0]) => {
      try {
        resolvePressKey(request);
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return (error as ValidationError).fieldErrors.map(({ path, rule }) => ({ path, rule }));
      }
      throw new Error('resolved');
    };
    expect(fieldOf({ key_combo: 'cmd+hyper' })).toEqual([
      { path: 'key_combo', rule: 'allowed-values' },
    ]);
    expect(fieldOf({ key: 'a', modifiers: ['shift', 'fn'] })).toEqual([
      { path: 'modifiers[1]', rule: 'allowed-values' },
    ]);
    expect(fieldOf({ key: 'hyper' })).toEqual([{ path: 'key', rule: 'allowed-values' }]);
  });
});

describe('names the agent receives (canonical only)', () => {
  it('when a name is an alias or unknown, then nothing is pressed and the error names it', () => {
    expect(() => checkResolvedKeyCombo('return', ['shift'])).toThrow(ValidationError);
    expect(() => checkResolvedKeyCombo('a', ['cmd'])).toThrow(ValidationError);
    expect(checkResolvedKeyCombo('a', ['shift', 'shift', 'ctrl']).modifiers).toEqual([
      'shift',
      'ctrl',
    ]);
  });

  it('when a command carries an alias, then the command schema refuses it: the gateway sends canonical names', () => {
    const press = {
      action: 'press',
      timeout_ms: 5000,
      budget_ms: 3000,
      requested_by: 'token-a',
      element_index: 0,
    };
    const check = (key: string, modifiers: string[]) =>
      validators.operatorCommand
        .check(createEnvelope('operator.command', { ...press, key, modifiers }).payload)
        .map(({ path, rule }) => ({ path, rule }));
    expect(check('enter', ['meta'])).toEqual([]);
    expect(check('return', [])).toEqual([{ path: 'key', rule: 'enum' }]);
    expect(check('a', ['cmd'])).toEqual([{ path: 'modifiers[0]', rule: 'enum' }]);
  });
});

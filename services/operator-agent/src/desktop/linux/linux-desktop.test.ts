import { keyNames, ValidationError, type KeyName, type ModifierName } from '@screenfleet/contracts';
import type { AtspiNode } from './atspi/atspi.client';
import { orderCandidates } from './listing/element-tree';
import { interactabilityOf } from './listing/interactability';
import { nutKeys, nutModifiers, toNutKeys } from './input/keys';
import { decodeRef, encodeRef } from './linux-desktop';
import { pressWithModifiers, type KeyboardDriver } from './input/nut.input';

const LISTABLE: [number, number] = [(1 << 11) | (1 << 25) | (1 << 30), 0];
const app = { bus: ':1.0', path: '/org/a11y/atspi/accessible/root' };
const node = (
  path: string,
  parent: string,
  index: number,
  name: string,
  listable = true,
): AtspiNode => ({
  ref: { bus: ':1.0', path },
  parent: { bus: ':1.0', path: parent },
  indexInParent: index,
  childCount: 0,
  interfaces: ['org.a11y.atspi.Accessible', 'org.a11y.atspi.Component'],
  name,
  role: 79,
  states: listable ? LISTABLE : [0, 0],
});

describe('element tree', () => {
  test('when the cache returns nodes out of order, then candidates come in document order with their window', () => {
    const nodes = [
      node('/b', '/win', 1, 'second'),
      node('/win', app.path, 0, 'My window', false),
      node('/a', '/win', 0, 'first'),
      node('/a1', '/a', 0, 'first child'),
      node('/stale', '/gone', 0, 'orphan'),
    ];
    const result = orderCandidates(app, nodes);
    expect(result.map((c) => c.node.name)).toEqual(['first', 'first child', 'second']);
    expect(result.every((c) => c.window === 'My window')).toBe(true);
  });
});

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

describe('pressWithModifiers', () => {
  const recorder = (failOn?: string) => {
    const log: string[] = [];
    const keyboard: KeyboardDriver = {
      pressKey: (key) => {
        log.push(`down ${key}`);
        return key === failOn ? Promise.reject(new Error('boom')) : Promise.resolve();
      },
      releaseKey: (key) => {
        log.push(`up ${key}`);
        return Promise.resolve();
      },
    };
    return { log, keyboard };
  };

  test('when the press succeeds, then modifiers are released in reverse order', async () => {
    const { log, keyboard } = recorder();
    await pressWithModifiers(keyboard, 'A', ['LeftControl', 'LeftShift']);
    expect(log).toEqual([
      'down LeftControl',
      'down LeftShift',
      'down A',
      'up A',
      'up LeftShift',
      'up LeftControl',
    ]);
  });

  test('when a press fails, then everything pressed so far is released and the error rethrown', async () => {
    const { log, keyboard } = recorder('LeftShift');
    await expect(pressWithModifiers(keyboard, 'A', ['LeftControl', 'LeftShift'])).rejects.toThrow(
      'boom',
    );
    expect(log).toEqual(['down LeftControl', 'down LeftShift', 'up LeftShift', 'up LeftControl']);
  });
});

describe('refs and interactability', () => {
  test('when a ref is encoded, then it decodes to the same bus and path', () => {
    const ref = { bus: ':1.42', path: '/org/a11y/atspi/accessible/7' };
    expect(decodeRef(encodeRef(ref))).toEqual(ref);
  });

  test('when a role takes input, then it is definite; other focusables are sometimes', () => {
    expect(interactabilityOf('push button', true)).toBe('definite');
    expect(interactabilityOf('document web', true)).toBe('sometimes');
    expect(interactabilityOf('entry', false)).toBe('none');
  });
});

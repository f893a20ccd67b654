import type { AtspiNode } from './atspi.client';
import { IFACE } from './atspi.constants';
import type { Candidate } from './element-tree';
import { isListingChange, TreeCache } from './tree-cache';

const candidate = (path: string): Candidate => ({
  key: `:1.0${path}`,
  node: {
    ref: { bus: ':1.0', path },
    parent: { bus: ':1.0', path: '/root' },
    indexInParent: 0,
    childCount: 0,
    interfaces: [],
    name: path,
    role: 79,
    states: [0, 0],
  } satisfies AtspiNode,
  window: 'w',
});
const box = (y: number) => ({ x: 10, y, width: 100, height: 20 });

describe('tree cache', () => {
  test('when an event may add, remove, rename or hide an element, then it counts as a change; focus and text edits do not', () => {
    const object = (member: string, detail: string) =>
      isListingChange(IFACE.eventObject, member, detail);
    expect(object('ChildrenChanged', 'remove')).toBe(true);
    expect(object('StateChanged', 'showing')).toBe(true);
    expect(object('StateChanged', 'focusable')).toBe(true);
    expect(object('PropertyChange', 'accessible-name')).toBe(true);
    expect(object('BoundsChanged', '')).toBe(true);
    expect(isListingChange(IFACE.cache, 'RemoveAccessible', undefined)).toBe(true);

    expect(object('StateChanged', 'focused')).toBe(false);
    expect(object('PropertyChange', 'accessible-value')).toBe(false);
    expect(object('TextChanged', 'insert')).toBe(false);
    expect(object('TextCaretMoved', '')).toBe(false);
    expect(isListingChange('org.a11y.atspi.Event.Window', 'Activate', '')).toBe(false);
  });

  test("when the app's change count or the age moves on, then its candidates are read again", () => {
    let now = 0;
    const trees = new TreeCache(5000, () => now);
    const candidates = [candidate('/a')];
    expect(trees.get(':1.0', 0)).toBeUndefined();
    trees.save(':1.0', 3, candidates);
    expect(trees.get(':1.0', 3)).toBe(candidates);
    expect(trees.get(':1.0', 4)).toBeUndefined();
    expect(trees.get(':1.1', 3)).toBeUndefined();
    now = 5001;
    expect(trees.get(':1.0', 3)).toBeUndefined();
  });

  test('when the candidates are stale, then they are still there as the previous ones until replaced', () => {
    let now = 0;
    const trees = new TreeCache(5000, () => now);
    expect(trees.previous(':1.0')).toBeUndefined();
    const old = [candidate('/a')];
    trees.save(':1.0', 3, old);
    now = 6000;
    expect(trees.get(':1.0', 4)).toBeUndefined();
    expect(trees.previous(':1.0')).toBe(old);
    const fresh = [candidate('/a'), candidate('/b')];
    trees.save(':1.0', 4, fresh);
    expect(trees.previous(':1.0')).toBe(fresh);
  });

  test('when a listed element moved or vanished since the previous listing, then the entry is dropped', () => {
    const trees = new TreeCache(5000, () => 0);
    trees.save(':1.0', 0, [candidate('/a'), candidate('/b')]);
    const listed = new Map([
      [':1.0/a', box(10)],
      [':1.0/b', box(40)],
    ]);
    expect(trees.record(':1.0', listed, false)).toBe(true);
    // Unchanged: still cached.
    expect(trees.record(':1.0', new Map(listed), true)).toBe(true);
    expect(trees.get(':1.0', 0)).toBeDefined();
    // Scrolled by 5 px: read again.
    expect(trees.record(':1.0', new Map([[':1.0/a', box(5)]]), true)).toBe(false);
    expect(trees.get(':1.0', 0)).toBeUndefined();

    trees.save(':1.0', 0, [candidate('/a')]);
    trees.record(':1.0', new Map([[':1.0/a', box(10)]]), false);
    expect(trees.record(':1.0', new Map([[':1.0/a', null]]), true)).toBe(false);
  });

  test('when an app is no longer on the bus, then its entry goes', () => {
    const trees = new TreeCache(5000, () => 0);
    trees.save(':1.0', 0, []);
    trees.save(':1.7', 0, []);
    trees.keepOnly(new Set([':1.7']));
    expect(trees.get(':1.0', 0)).toBeUndefined();
    expect(trees.get(':1.7', 0)).toBeDefined();
  });
});

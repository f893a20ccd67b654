import type { AtspiNode } from '../atspi/atspi.client';
import { IFACE, ROOT_PATH } from '../atspi/atspi.constants';
import type { IncomingMessage } from '../dbus/dbus.connection';
import { TreeCache } from './tree-cache';

const APP = { bus: ':1.0', path: ROOT_PATH };

const node = (path: string, index = 0): AtspiNode => ({
  ref: { bus: ':1.0', path },
  parent: APP,
  indexInParent: index,
  childCount: 0,
  interfaces: [IFACE.component],
  name: path,
  role: 79,
  // focusable, showing, visible
  states: [(1 << 11) | (1 << 25) | (1 << 30), 0],
});
const box = (y: number) => ({ x: 10, y, width: 100, height: 20 });
const rename = (path: string, name: string): IncomingMessage =>
  ({
    type: 4,
    sender: ':1.0',
    path,
    interface: IFACE.eventObject,
    member: 'PropertyChange',
    body: ['accessible-name', 0, 0, { signature: 's', value: name }, {}],
  }) as unknown as IncomingMessage;

describe('tree cache', () => {
  test('when a tree was read, then it serves listings until it is older than the age limit', async () => {
    let now = 0;
    const trees = new TreeCache(5000, () => now);
    expect(trees.get(':1.0')).toBeUndefined();
    const read = await trees.read(APP, async () => [node('/a')]);
    expect(read.map((c) => c.key)).toEqual([':1.0/a']);
    expect(trees.get(':1.0')?.map((c) => c.key)).toEqual([':1.0/a']);
    expect(trees.get(':1.1')).toBeUndefined();
    now = 5001;
    expect(trees.get(':1.0')).toBeUndefined();
    // Still there as the previous tree, whose bounds a new read asks meanwhile.
    expect(trees.previous(':1.0')?.map((c) => c.key)).toEqual([':1.0/a']);
  });

  test('when the app renames an element, then the next listing shows the new name without a read', async () => {
    const trees = new TreeCache(5000, () => 0);
    await trees.read(APP, async () => [node('/a')]);
    trees.onSignal(rename('/a', 'Family name'));
    expect(trees.get(':1.0')?.map((c) => c.node.name)).toEqual(['Family name']);
  });

  test('when the app sends a tree event while its tree is read, then that tree serves once and is read again next time', async () => {
    const trees = new TreeCache(5000, () => 0);
    const candidates = await trees.read(APP, async () => {
      trees.onSignal(rename('/a', 'Renamed meanwhile'));
      return [node('/a')];
    });
    expect(candidates).toHaveLength(1);
    expect(trees.get(':1.0')).toBeUndefined();
  });

  test('when a tree event comes during a read while the kept tree is current, then the kept tree stays', async () => {
    const trees = new TreeCache(5000, () => 0);
    await trees.read(APP, async () => [node('/a')]);
    await trees.read(APP, async () => {
      trees.onSignal(rename('/a', 'Renamed meanwhile'));
      return [node('/a'), node('/b', 1)];
    });
    expect(trees.get(':1.0')?.map((c) => c.node.name)).toEqual(['Renamed meanwhile']);
  });

  test('when a listed element moved or vanished since the previous listing, then the tree is read again; a new element is no move', async () => {
    const trees = new TreeCache(5000, () => 0);
    await trees.read(APP, async () => [node('/a'), node('/b', 1)]);
    const listed = new Map([
      [':1.0/a', box(10)],
      [':1.0/b', box(40)],
    ]);
    expect(trees.record(':1.0', listed, false)).toBe('same');
    expect(trees.record(':1.0', new Map([...listed, [':1.0/c', box(70)]]), true)).toBe('same');
    expect(trees.get(':1.0')).toBeDefined();
    // Scrolled by 5 px, no event: read again.
    expect(trees.record(':1.0', new Map([[':1.0/a', box(5)]]), true)).toBe('moved');
    expect(trees.get(':1.0')).toBeUndefined();

    await trees.read(APP, async () => [node('/a')]);
    trees.record(':1.0', new Map([[':1.0/a', box(10)]]), false);
    expect(trees.record(':1.0', new Map([[':1.0/a', null]]), true)).toBe('moved');
  });

  test('when elements moved after the page changed (events applied), then the tree serves and should be read again soon', async () => {
    const trees = new TreeCache(5000, () => 0);
    await trees.read(APP, async () => [node('/a'), node('/b', 1)]);
    trees.record(':1.0', new Map([[':1.0/b', box(40)]]), false);
    trees.onSignal(rename('/a', 'Family name'));
    expect(trees.record(':1.0', new Map([[':1.0/b', box(20)]]), true)).toBe('changed');
    expect(trees.get(':1.0')).toBeDefined();
    // The next move without an event is a scroll again.
    expect(trees.record(':1.0', new Map([[':1.0/b', box(0)]]), true)).toBe('moved');
  });

  test('when an app is no longer on the bus, then its entry goes', async () => {
    const trees = new TreeCache(5000, () => 0);
    await trees.read(APP, async () => []);
    await trees.read({ bus: ':1.7', path: ROOT_PATH }, async () => []);
    trees.keepOnly(new Set([':1.7']));
    expect(trees.get(':1.0')).toBeUndefined();
    expect(trees.get(':1.7')).toBeDefined();
  });
});

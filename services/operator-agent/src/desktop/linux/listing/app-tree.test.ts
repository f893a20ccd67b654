import type { AtspiNode, ObjectRef } from '../atspi/atspi.client';
import { IFACE, ROLE, ROOT_PATH } from '../atspi/atspi.constants';
import { AppTree, isTreeEvent } from './app-tree';
import type { IncomingMessage } from '../dbus/dbus.connection';

const BUS = ':1.0';
const APP: ObjectRef = { bus: BUS, path: ROOT_PATH };
const LISTABLE: [number, number] = [(1 << 11) | (1 << 25) | (1 << 30), 0];

const ref = (path: string): ObjectRef => ({ bus: BUS, path });
const node = (path: string, parent: ObjectRef, index: number, role = 79): AtspiNode => ({
  ref: ref(path),
  parent,
  indexInParent: index,
  childCount: 0,
  interfaces: [IFACE.component],
  name: path.slice(1),
  role,
  states: [...LISTABLE],
});
/** Cache.GetItems' wire form of a node, as AddAccessible carries it. */
const item = (n: AtspiNode) => [
  [n.ref.bus, n.ref.path],
  [BUS, ROOT_PATH],
  [n.parent.bus, n.parent.path],
  n.indexInParent,
  0,
  n.interfaces,
  n.name,
  n.role,
  '',
  n.states,
];
const signal = (iface: string, member: string, path: string, body: unknown[]): IncomingMessage =>
  ({ type: 4, sender: BUS, path, interface: iface, member, body }) as unknown as IncomingMessage;
const object = (member: string, path: string, detail: string, index: number, value?: unknown) =>
  signal(IFACE.eventObject, member, path, [detail, index, 0, { signature: 'v', value }, {}]);
const added = (n: AtspiNode) =>
  signal(IFACE.cache, 'AddAccessible', '/org/a11y/atspi/cache', [item(n)]);
const removed = (path: string) =>
  signal(IFACE.cache, 'RemoveAccessible', '/org/a11y/atspi/cache', [[BUS, path]]);

/** A document with three inputs a, b, c. */
function page(): AppTree {
  const doc = node('/doc', APP, 0, ROLE.documentWeb);
  return new AppTree(
    APP,
    [doc, node('/a', doc.ref, 0), node('/b', doc.ref, 1), node('/c', doc.ref, 2)],
    0,
  );
}
const names = (tree: AppTree) => tree.candidates().map((c) => c.node.name);

describe('an application tree kept current from its events', () => {
  test('when a child is inserted between two others, then it is listed there and its later siblings after it', () => {
    const tree = page();
    tree.apply(object('ChildrenChanged', '/doc', 'add', 1, [BUS, '/x']));
    // Announced but not described yet: the tree is not current until AddAccessible comes.
    expect(tree.current).toBe(false);
    tree.apply(added(node('/x', ref('/doc'), 1)));
    expect(tree.current).toBe(true);
    expect(names(tree)).toEqual(['doc', 'a', 'x', 'b', 'c']);
  });

  test('when a child is removed, then it is gone and an insertion after it still lands in its place', () => {
    const tree = page();
    tree.apply(object('ChildrenChanged', '/doc', 'remove', 1, [BUS, '/b']));
    tree.apply(removed('/b'));
    expect(names(tree)).toEqual(['doc', 'a', 'c']);
    tree.apply(object('ChildrenChanged', '/doc', 'add', 2, [BUS, '/y']));
    tree.apply(added(node('/y', ref('/doc'), 2)));
    expect(names(tree)).toEqual(['doc', 'a', 'c', 'y']);
    // A removal announced only by the cache shifts the siblings all the same.
    tree.apply(removed('/a'));
    tree.apply(object('ChildrenChanged', '/doc', 'add', 0, [BUS, '/z']));
    tree.apply(added(node('/z', ref('/doc'), 0)));
    expect(names(tree)).toEqual(['doc', 'z', 'c', 'y']);
  });

  test('when a name, role or listing state changes, then the node shows it', () => {
    const tree = page();
    tree.apply(object('PropertyChange', '/a', 'accessible-name', 0, 'Family name'));
    tree.apply(object('StateChanged', '/b', 'showing', 0));
    expect(names(tree)).toEqual(['doc', 'Family name', 'c']);
    tree.apply(object('StateChanged', '/b', 'showing', 1));
    tree.apply(object('PropertyChange', '/c', 'accessible-role', 0, ROLE.invalid));
    expect(names(tree)).toEqual(['doc', 'Family name', 'b']);
    expect(tree.current).toBe(true);
  });

  test('when an event cannot be placed, then the tree is no longer current; events of other nodes change nothing', () => {
    const tree = page();
    tree.apply(object('ChildrenChanged', '/unknown', 'add', 0, [BUS, '/q']));
    tree.apply(object('StateChanged', '/a', 'focused', 1));
    tree.apply(object('TextChanged', '/a', 'insert', 0, 'x'));
    expect(tree.current).toBe(true);
    tree.apply(object('ChildrenChanged', '/doc', 'add', -1, [BUS, '/q']));
    expect(tree.current).toBe(false);
    const moved = page();
    moved.apply(object('PropertyChange', '/a', 'accessible-parent', 0, [BUS, '/c']));
    expect(moved.current).toBe(false);
  });

  test('when tree events are told apart, then focus, text and value events are not among them', () => {
    expect(isTreeEvent(object('ChildrenChanged', '/doc', 'remove', 0, [BUS, '/a']))).toBe(true);
    expect(isTreeEvent(object('StateChanged', '/a', 'showing', 0))).toBe(true);
    expect(isTreeEvent(object('PropertyChange', '/a', 'accessible-name', 0, 'x'))).toBe(true);
    expect(isTreeEvent(removed('/a'))).toBe(true);
    expect(isTreeEvent(object('StateChanged', '/a', 'focused', 1))).toBe(false);
    expect(isTreeEvent(object('PropertyChange', '/a', 'accessible-value', 0, 1))).toBe(false);
    expect(isTreeEvent(object('TextChanged', '/a', 'insert', 0, 'x'))).toBe(false);
  });

  test('when asked for the page above an element, then the document is found from the tree, not the element itself', () => {
    const tree = page();
    expect(tree.documentAbove(ref('/b'))).toEqual(ref('/doc'));
    expect(tree.documentAbove(ref('/doc'))).toBeNull();
    expect(tree.documentAbove(ref('/nowhere'))).toBeUndefined();
  });
});

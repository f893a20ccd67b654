import type { AtspiClient, ObjectRef } from './atspi.client';
import { STATE } from './atspi.constants';
import { AtspiTreeReader } from './atspi.tree';
import { DBusCallError } from '../dbus/dbus.connection';

/** One node of a fake application: its children, and whether the app's cache holds it. */
interface FakeNode {
  children: string[];
  cached?: boolean;
  states?: [number, number];
}

const BUS = ':1.0';
const ROOT = '/org/a11y/atspi/accessible/root';

/** An AtspiClient answering from `tree`; `cache` false makes GetItems an UnknownMethod. */
function fakeClient(tree: Record<string, FakeNode>, cache = true) {
  const calls: string[] = [];
  const parentOf = (path: string) =>
    Object.keys(tree).find((p) => tree[p]?.children.includes(path)) ?? '';
  const node = (ref: ObjectRef) => tree[ref.path] as FakeNode;
  const client = {
    call: (_bus: string, path: string, _iface: string, member: string) => {
      calls.push(`${member} ${path}`);
      if (member === 'GetItems') {
        if (!cache) {
          return Promise.reject(
            new DBusCallError('org.freedesktop.DBus.Error.UnknownMethod', 'no cache'),
          );
        }
        const items = Object.entries(tree)
          .filter(([, n]) => n.cached !== false)
          .map(([p, n]) => {
            const parent = parentOf(p);
            return [
              [BUS, p],
              [BUS, ROOT],
              [BUS, parent],
              parent ? (tree[parent] as FakeNode).children.indexOf(p) : -1,
              n.children.length,
              [],
              p,
              1,
              '',
              n.states ?? [0, 0],
            ];
          });
        return Promise.resolve([items]);
      }
      if (member === 'GetChildren') {
        return Promise.resolve([(tree[path] as FakeNode).children.map((c) => [BUS, c])]);
      }
      return Promise.reject(new Error(`unexpected ${member}`));
    },
    role: () => Promise.resolve(1),
    states: (ref: ObjectRef) => Promise.resolve(node(ref).states ?? [0, 0]),
    interfaces: () => Promise.resolve([]),
    name: (ref: ObjectRef) => Promise.resolve(ref.path),
  };
  return { client: client as unknown as AtspiClient, calls };
}

const app = { bus: BUS, path: ROOT };

describe('reading an application tree', () => {
  test("when the app's cache holds the whole tree, then one GetItems call reads it", async () => {
    const { client, calls } = fakeClient({
      [ROOT]: { children: ['/frame'] },
      '/frame': { children: ['/a', '/b'] },
      '/a': { children: [] },
      '/b': { children: [] },
    });
    const nodes = await new AtspiTreeReader(client).nodes(app);
    expect(nodes.map((n) => n.name).sort()).toEqual(['/a', '/b', '/frame', ROOT]);
    expect(calls).toEqual([`GetItems /org/a11y/atspi/cache`]);
  });

  test('when the cache lacks a subtree (the page), then the missing children are walked', async () => {
    const { client, calls } = fakeClient({
      [ROOT]: { children: ['/frame'] },
      '/frame': { children: ['/toolbar', '/page'] },
      '/toolbar': { children: [] },
      '/page': { children: ['/input'], cached: false },
      '/input': { children: [], cached: false },
    });
    const nodes = await new AtspiTreeReader(client).nodes(app);
    expect(nodes.find((n) => n.name === '/page')).toMatchObject({
      parent: { bus: BUS, path: '/frame' },
      indexInParent: 1,
      childCount: 1,
    });
    expect(nodes.find((n) => n.name === '/input')?.parent.path).toBe('/page');
    expect(nodes).toHaveLength(5);
    expect(calls).toContain('GetChildren /frame');
    expect(calls).not.toContain('GetChildren /toolbar');
  });

  test('when a node manages its descendants, then its uncached children stay unread', async () => {
    const manages: [number, number] = [2 ** STATE.managesDescendants, 0];
    const { client, calls } = fakeClient({
      [ROOT]: { children: ['/table'] },
      '/table': { children: ['/row1', '/row2'], states: manages },
      '/row1': { children: [], cached: false },
      '/row2': { children: [], cached: false },
    });
    const nodes = await new AtspiTreeReader(client).nodes(app);
    expect(nodes.map((n) => n.name).sort()).toEqual([ROOT, '/table'].sort());
    expect(calls).toEqual([`GetItems /org/a11y/atspi/cache`]);
  });

  test('when the app has no cache, then the tree is walked, and GetItems is not asked again', async () => {
    const { client, calls } = fakeClient(
      { [ROOT]: { children: ['/a'] }, '/a': { children: [] } },
      false,
    );
    const reader = new AtspiTreeReader(client);
    expect((await reader.nodes(app)).map((n) => n.name)).toEqual([ROOT, '/a']);
    await reader.nodes(app);
    expect(calls.filter((c) => c.startsWith('GetItems'))).toHaveLength(1);
  });
});

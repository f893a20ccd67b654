import type { AtspiNode } from '../atspi/atspi.client';
import { orderCandidates } from './element-tree';

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

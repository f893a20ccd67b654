import { connectionOrder, nodeLabel, NodeRotation } from './broker-nodes';

const nodes = ['amqp://a:5672/v', 'amqp://b:5672/v', 'amqp://c:5672/v'];

/** A random source that returns the given values in turn. */
const draws = (...values: number[]) => {
  let i = 0;
  return () => values[i++ % values.length]!;
};

describe('connectionOrder', () => {
  it('when the order is listed, then the nodes come as written', () => {
    expect(connectionOrder(nodes, 'listed', draws(0))).toEqual(nodes);
  });

  it('when shuffled, then the order follows the random draws and is a permutation of the list', () => {
    // Fisher-Yates from the end: i=2 takes j=floor(0*3)=0, i=1 takes j=floor(0.99*2)=1.
    expect(connectionOrder(nodes, 'shuffled', draws(0, 0.99))).toEqual([
      'amqp://c:5672/v',
      'amqp://b:5672/v',
      'amqp://a:5672/v',
    ]);
    expect(connectionOrder(nodes, 'shuffled', draws(0.99, 0.99))).toEqual(nodes);
  });

  it('when many processes shuffle the same list, then each node comes first for about a third of them', () => {
    const first = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const [node] = connectionOrder(nodes, 'shuffled');
      first.set(node!, (first.get(node!) ?? 0) + 1);
    }
    for (const node of nodes) expect(first.get(node)).toBeGreaterThan(800);
  });

  it('when shuffled, then the given list is left as it was', () => {
    const given = [...nodes];
    connectionOrder(given, 'shuffled', draws(0));
    expect(given).toEqual(nodes);
  });
});

describe('NodeRotation', () => {
  it('when a node is lost, then the next one is tried, wrapping round to the first', () => {
    const rotation = new NodeRotation(nodes);
    expect(rotation.current).toBe('amqp://a:5672/v');
    expect([rotation.next(), rotation.next(), rotation.next()]).toEqual([
      'amqp://b:5672/v',
      'amqp://c:5672/v',
      'amqp://a:5672/v',
    ]);
    expect(rotation.size).toBe(3);
  });

  it('when there is one node, then every attempt is on it', () => {
    const rotation = new NodeRotation(['amqp://only/v']);
    expect([rotation.current, rotation.next(), rotation.next()]).toEqual([
      'amqp://only/v',
      'amqp://only/v',
      'amqp://only/v',
    ]);
  });

  it('when there is no node, then it refuses to start', () => {
    expect(() => new NodeRotation([])).toThrow('no broker node to connect to');
  });
});

describe('nodeLabel', () => {
  it('when a URL carries a user and password, then the label keeps the node and vhost only', () => {
    expect(nodeLabel('amqps://sf-gateway:hunter2@broker-2.internal:5671/screenfleet')).toBe(
      'amqps://broker-2.internal:5671/screenfleet',
    );
    expect(nodeLabel('amqp://guest:guest@127.0.0.1:5672/%2F?heartbeat=10')).toBe(
      'amqp://127.0.0.1:5672/%2F',
    );
  });

  it('when the text is not a URL, then it says so rather than print it', () => {
    expect(nodeLabel('user:secret@nowhere')).toBe('<not a node URL>');
    expect(nodeLabel('amqp//u:secret@h')).toBe('<not a node URL>');
  });
});

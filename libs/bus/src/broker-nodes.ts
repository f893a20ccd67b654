import type { BrokerNodeOrder } from '@screenfleet/runtime';

/**
 * The order one process tries the broker's nodes in. Shuffled, every process of a deployment
 * given the same list starts on a node of its own drawing, so gateways and workers spread over
 * a cluster with no per-process setting (as RabbitMQ's client guides advise); listed, the first
 * node is the one the operator put first.
 */
export function connectionOrder(
  urls: readonly string[],
  order: BrokerNodeOrder,
  random: () => number = Math.random,
): string[] {
  const nodes = [...urls];
  if (order === 'listed') return nodes;
  // Fisher-Yates: every order equally likely.
  for (let i = nodes.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [nodes[i], nodes[j]] = [nodes[j]!, nodes[i]!];
  }
  return nodes;
}

/**
 * The nodes in connection order and the one in use. A lost node is the least likely to answer
 * next, so every reconnect attempt moves on to the next node, wrapping round; with one node it
 * is always that one.
 */
export class NodeRotation {
  private index = 0;

  constructor(private readonly nodes: readonly string[]) {
    if (nodes.length === 0) throw new Error('no broker node to connect to');
  }

  get size(): number {
    return this.nodes.length;
  }

  get current(): string {
    return this.nodes[this.index]!;
  }

  /** Moves on to the next node and returns it. */
  next(): string {
    this.index = (this.index + 1) % this.nodes.length;
    return this.current;
  }
}

/**
 * A node's URL as a log line may show it: scheme, host, port and vhost, never the user or the
 * password it carries.
 */
export function nodeLabel(url: string): string {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  // Without a host, the text after the scheme could be anything, a password included.
  if (!parsed?.host) return '<not a node URL>';
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

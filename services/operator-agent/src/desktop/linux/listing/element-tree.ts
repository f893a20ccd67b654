/**
 * Pure: turns an application's AT-SPI nodes (in whatever order the cache returned them) into
 * the candidates for the element list, in document order, each with its window title.
 */
import { refKey, type AtspiNode, type ObjectRef } from '../atspi/atspi.client';
import { hasState, IFACE, ROLE, STATE } from '../atspi/atspi.constants';

export interface Candidate {
  node: AtspiNode;
  /** refKey(node.ref), made once per tree read. */
  key: string;
  /** The name of the app root's child on the node's parent chain: the top-level window. */
  window: string;
}

/** Focusable, showing and visible, with the Component interface (so it has screen bounds). */
export function isListable(node: Pick<AtspiNode, 'interfaces' | 'states' | 'role'>): boolean {
  return (
    node.role !== ROLE.invalid &&
    node.interfaces.includes(IFACE.component) &&
    hasState(node.states, STATE.focusable) &&
    hasState(node.states, STATE.showing) &&
    hasState(node.states, STATE.visible)
  );
}

/**
 * Depth-first, children by their index in the parent: the order a user reads and tabs
 * through, and the same on every call while the UI does not change. Nodes not reachable from
 * the app root (stale cache entries) are left out.
 */
export function orderCandidates(app: ObjectRef, nodes: readonly AtspiNode[]): Candidate[] {
  const children = new Map<string, AtspiNode[]>();
  for (const node of nodes) {
    const key = refKey(node.parent);
    const siblings = children.get(key);
    if (siblings) siblings.push(node);
    else children.set(key, [node]);
  }
  for (const siblings of children.values()) {
    siblings.sort((a, b) => a.indexInParent - b.indexInParent);
  }

  const result: Candidate[] = [];
  const seen = new Set<string>();
  // Iterative, so a deep page cannot overflow the stack.
  const stack: Omit<Candidate, 'key'>[] = [];
  const pushChildren = (parent: ObjectRef, window: string | undefined): void => {
    const list = children.get(refKey(parent)) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const child = list[i] as AtspiNode;
      stack.push({ node: child, window: window ?? child.name });
    }
  };
  pushChildren(app, undefined);
  while (stack.length > 0) {
    const { node, window } = stack.pop() as Omit<Candidate, 'key'>;
    const key = refKey(node.ref);
    if (seen.has(key)) continue;
    seen.add(key);
    if (isListable(node)) result.push({ node, key, window });
    pushChildren(node.ref, window);
  }
  return result;
}

/**
 * Reads every node of an application's accessible tree: Cache.GetItems in one call when the
 * application offers it (completed where its cache has gaps), else the recursive walk (ten
 * times slower, but every toolkit answers it).
 */
import {
  asRef,
  isGoneError,
  refKey,
  type AtspiClient,
  type AtspiNode,
  type ObjectRef,
} from './atspi.client';
import { CACHE_PATH, hasState, IFACE, STATE } from './atspi.constants';
import { DBusCallError } from '../dbus/dbus.connection';

/** Parses one `(so)(so)(so)iiassusau` entry of Cache.GetItems. */
export function parseCacheItem(item: unknown): AtspiNode {
  const fields = item as unknown[];
  const states = (fields[9] as number[] | undefined) ?? [];
  return {
    ref: asRef(fields[0]),
    parent: asRef(fields[2]),
    indexInParent: Number(fields[3]),
    childCount: Number(fields[4]),
    interfaces: fields[5] as string[],
    name: String(fields[6]),
    role: Number(fields[7]),
    states: [states[0] ?? 0, states[1] ?? 0],
  };
}

/** A child removed while we walk is simply not there any more. */
const skipGone = (error: unknown): void => {
  if (!isGoneError(error)) throw error;
};

export class AtspiTreeReader {
  /** Apps whose cache answered UnknownMethod: walked instead. */
  private readonly noCache = new Set<string>();

  constructor(private readonly atspi: AtspiClient) {}

  async nodes(app: ObjectRef): Promise<AtspiNode[]> {
    if (!this.noCache.has(app.bus)) {
      try {
        const [items] = await this.atspi.call(app.bus, CACHE_PATH, IFACE.cache, 'GetItems');
        const nodes = (items as unknown[]).map(parseCacheItem);
        if (nodes.length > 0) return await this.fillGaps(nodes);
      } catch (error) {
        if (isGoneError(error)) throw error;
        if (error instanceof DBusCallError && error.type.endsWith('UnknownMethod')) {
          // Remember only a definite "no cache"; Chromium says so until RegisterEvent lands.
          this.noCache.add(app.bus);
        }
      }
    }
    const nodes: AtspiNode[] = [];
    await this.visit(app, { bus: '', path: '' }, -1, nodes);
    return nodes;
  }

  /** Adds the node and everything under it to `nodes`, asking each node itself. */
  private async visit(
    ref: ObjectRef,
    parent: ObjectRef,
    index: number,
    nodes: AtspiNode[],
  ): Promise<void> {
    const atspi = this.atspi;
    const [role, states, interfaces, name, children] = await Promise.all([
      atspi.role(ref),
      atspi.states(ref),
      atspi.interfaces(ref),
      atspi.name(ref),
      atspi.call(ref.bus, ref.path, IFACE.accessible, 'GetChildren'),
    ]);
    const childRefs = (children[0] as unknown[]).map(asRef);
    nodes.push({
      ref,
      parent,
      indexInParent: index,
      childCount: childRefs.length,
      interfaces,
      name,
      role,
      states,
    });
    await Promise.all(
      childRefs.map((child, i) => this.visit(child, ref, i, nodes).catch(skipGone)),
    );
  }

  /**
   * Chromium's cache sometimes lacks a whole subtree, its web page included, for good (2 of
   * 40 starts here): a node then has fewer cached children than it says it has. Those children
   * are walked. Nodes that manage their descendants (huge tables, whose children no cache
   * holds) are left as they are.
   */
  private async fillGaps(nodes: AtspiNode[]): Promise<AtspiNode[]> {
    const cachedChildren = new Map<string, number>();
    for (const node of nodes) {
      cachedChildren.set(refKey(node.parent), (cachedChildren.get(refKey(node.parent)) ?? 0) + 1);
    }
    const gaps = nodes.filter(
      (node) =>
        node.childCount > (cachedChildren.get(refKey(node.ref)) ?? 0) &&
        !hasState(node.states, STATE.managesDescendants),
    );
    if (gaps.length === 0) return nodes;
    const known = new Set(nodes.map((node) => refKey(node.ref)));
    const found: AtspiNode[] = [];
    await Promise.all(
      gaps.map(async (gap) => {
        const [children] = await this.atspi
          .call(gap.ref.bus, gap.ref.path, IFACE.accessible, 'GetChildren')
          .catch((error: unknown) => {
            skipGone(error);
            return [[]];
          });
        const missing = (children as unknown[])
          .map((child, index) => ({ ref: asRef(child), index }))
          .filter((child) => !known.has(refKey(child.ref)));
        await Promise.all(
          missing.map((child) =>
            this.visit(child.ref, gap.ref, child.index, found).catch(skipGone),
          ),
        );
      }),
    );
    return found.length === 0 ? nodes : [...nodes, ...found];
  }
}

/**
 * One application's accessible tree as read whole (Cache.GetItems), then kept current from the
 * application's own events, so that a listing right after a change does not read the whole tree
 * again (a 500-element page: ~20 ms of Chromium's CPU). This file is the one home of the rule
 * "which events change a listing": the events registered (TREE_EVENTS) and what each does.
 *
 * - Cache.AddAccessible / RemoveAccessible: a node described whole / gone.
 * - ChildrenChanged add/remove (index, child): the parent's children, whose later siblings move
 *   up or down one index (no event says so for each of them).
 * - PropertyChange accessible-name / -role / -parent: that field.
 * - StateChanged <state> 0/1: that state bit (focusable, showing, visible ... decide listing).
 * Anything else (text edits, focus moving, values) changes nothing a listing shows. An event the
 * model cannot place (a child added under an unknown index, or announced and never described by
 * the time of a listing) makes it stale: the next listing reads the tree again.
 */
import { asRef, refKey, type AtspiNode, type ObjectRef } from '../atspi/atspi.client';
import { IFACE, ROLE, STATE_NAMES } from '../atspi/atspi.constants';
import { parseCacheItem } from '../atspi/atspi.tree';
import { orderCandidates, type Candidate } from './element-tree';
import type { IncomingMessage } from '../dbus/dbus.connection';

/**
 * The AT-SPI events a listing keeps its trees current with (an application sends only those a
 * client registered for). children-changed also makes Chromium answer Cache.GetItems at all,
 * and state-changed carries the focus events a press waits for.
 */
export const TREE_EVENTS = [
  'object:children-changed',
  'object:state-changed',
  'object:property-change',
] as const;

/** The fields of an Event.Object signal: detail, detail1, detail2, any_data. */
function eventFields(signal: IncomingMessage): { detail: string; index: number; data: unknown } {
  const [detail, index, , data] = signal.body as [string, number, number, { value?: unknown }?];
  return { detail: String(detail), index: Number(index), data: data?.value };
}

/** True for the signals this model reads (and so, during a tree read, make its result stale). */
export function isTreeEvent(signal: IncomingMessage): boolean {
  if (signal.interface === IFACE.cache) return true;
  if (signal.interface !== IFACE.eventObject) return false;
  const { detail } = eventFields(signal);
  switch (signal.member ?? '') {
    case 'ChildrenChanged':
      return true;
    case 'PropertyChange':
      return ['accessible-name', 'accessible-role', 'accessible-parent'].includes(detail);
    case 'StateChanged':
      return detail !== 'focused' && STATE_NAMES[detail] !== undefined;
    default:
      return false;
  }
}

const DETACHED: ObjectRef = { bus: '', path: '' };

export class AppTree {
  private readonly nodes = new Map<string, AtspiNode>();
  /** Children a ChildrenChanged add announced that no AddAccessible has described yet. */
  private readonly announced = new Set<string>();
  private ordered: Candidate[] | undefined;
  /** False once an event came that this model could not apply. */
  private applicable = true;
  /** How many tree events were applied: changes since a listing mean the page changed. */
  changes = 0;

  constructor(
    readonly app: ObjectRef,
    nodes: readonly AtspiNode[],
    /** When the tree was read (monotonic ms). */
    readonly readAt: number,
  ) {
    for (const node of nodes) {
      this.nodes.set(refKey(node.ref), { ...node, states: [...node.states] });
    }
  }

  /** Whether the model still is the application's tree (as far as its events tell). */
  get current(): boolean {
    return this.applicable && this.announced.size === 0;
  }

  /** Marks the model as not current: the next listing reads the tree. */
  invalidate(): void {
    this.applicable = false;
  }

  candidates(): Candidate[] {
    this.ordered ??= orderCandidates(this.app, [...this.nodes.values()]);
    return this.ordered;
  }

  /**
   * The nearest web page (document) above the node: null when the model knows the whole chain up
   * to the application and there is none, undefined when it does not know the chain.
   */
  documentAbove(ref: ObjectRef): ObjectRef | null | undefined {
    let node = this.nodes.get(refKey(ref));
    for (let depth = 0; node !== undefined && depth < 256; depth++) {
      const parent = node.parent;
      if (parent.bus === this.app.bus && parent.path === this.app.path) return null;
      node = this.nodes.get(refKey(parent));
      if (node?.role === ROLE.documentWeb) return node.ref;
    }
    return undefined;
  }

  /** Applies one signal of the application; true when it was a tree event. */
  apply(signal: IncomingMessage): boolean {
    if (!isTreeEvent(signal)) return false;
    this.ordered = undefined;
    this.changes += 1;
    this.applyTreeEvent(signal);
    return true;
  }

  private applyTreeEvent(signal: IncomingMessage): void {
    if (signal.interface === IFACE.cache) {
      if (signal.member === 'AddAccessible') this.add(parseCacheItem(signal.body[0]));
      else if (signal.member === 'RemoveAccessible') this.remove(asRef(signal.body[0]));
      return;
    }
    const node = this.nodes.get(refKey({ bus: signal.sender ?? '', path: signal.path ?? '' }));
    const { detail, index, data } = eventFields(signal);
    switch (signal.member ?? '') {
      case 'ChildrenChanged':
        this.childrenChanged(signal, detail, index, asRef(data));
        return;
      case 'PropertyChange':
        if (!node) return;
        if (detail === 'accessible-name') node.name = String(data);
        else if (detail === 'accessible-role') node.role = Number(data);
        else this.invalidate(); // a new parent, whose index among its children no event gives
        return;
      case 'StateChanged': {
        const bit = STATE_NAMES[detail];
        if (!node || bit === undefined) return;
        const word = bit < 32 ? 0 : 1;
        const mask = 1 << (bit % 32);
        node.states[word] = index === 1 ? node.states[word] | mask : node.states[word] & ~mask;
        return;
      }
    }
  }

  private isKnownParent(ref: ObjectRef): boolean {
    return this.nodes.has(refKey(ref)) || (ref.bus === this.app.bus && ref.path === this.app.path);
  }

  private add(node: AtspiNode): void {
    const key = refKey(node.ref);
    this.announced.delete(key);
    this.nodes.set(key, node);
  }

  private remove(ref: ObjectRef): void {
    const key = refKey(ref);
    const node = this.nodes.get(key);
    if (node) this.detach(node);
    this.nodes.delete(key);
    this.announced.delete(key);
  }

  private childrenChanged(
    signal: IncomingMessage,
    detail: string,
    index: number,
    child: ObjectRef,
  ): void {
    const parent: ObjectRef = { bus: signal.sender ?? '', path: signal.path ?? '' };
    if (!this.isKnownParent(parent)) return; // not part of what we list
    const known = this.nodes.get(refKey(child));
    if (detail.startsWith('add')) {
      if (index < 0) {
        this.invalidate(); // no place among its siblings
        return;
      }
      if (known) this.move(known, parent, index);
      else {
        this.shift(parent, index, +1, child);
        this.announced.add(refKey(child));
      }
    } else if (detail.startsWith('remove')) {
      if (known) this.detach(known);
      else this.announced.delete(refKey(child));
    }
  }

  /** Takes the node out of its parent's children: the later siblings move up one. */
  private detach(node: AtspiNode): void {
    if (node.parent === DETACHED) return;
    this.shift(node.parent, node.indexInParent + 1, -1, node.ref);
    node.parent = DETACHED;
  }

  /** Puts the node at `index` among `parent`'s children. */
  private move(node: AtspiNode, parent: ObjectRef, index: number): void {
    this.detach(node);
    this.shift(parent, index, +1, node.ref);
    node.parent = parent;
    node.indexInParent = index;
  }

  /** Moves the children of `parent` at `from` and after by `by`, `except` one. */
  private shift(parent: ObjectRef, from: number, by: number, except: ObjectRef): void {
    const parentKey = refKey(parent);
    const exceptKey = refKey(except);
    for (const [key, sibling] of this.nodes) {
      if (
        key !== exceptKey &&
        sibling.indexInParent >= from &&
        refKey(sibling.parent) === parentKey
      ) {
        sibling.indexInParent += by;
      }
    }
  }
}

/**
 * A thin AT-SPI client: the accessibility methods the adapter asks (role, name, states, bounds,
 * text, focus ...), typed, over the connections of atspi.connection.ts (each call with a
 * timeout, to each application over its own socket when it has one).
 */
import type { ElementRef } from '../../desktop';
import { COORD_TYPE_SCREEN, GONE_ERRORS, IFACE, NULL_PATH, REGISTRY } from './atspi.constants';
import { AtspiConnection } from './atspi.connection';
import { DBusCallError, type IncomingMessage } from '../dbus/dbus.connection';

/** An accessible object: the unique bus name of its application and its object path. */
export interface ObjectRef {
  bus: string;
  path: string;
}

/** The object's key in maps, and the port's ElementRef for it: bus name, then path. */
export function refKey(ref: ObjectRef): string {
  return `${ref.bus}${ref.path}`;
}

export function encodeRef(ref: ObjectRef): ElementRef {
  return refKey(ref) as ElementRef;
}

/** Bus names never contain '/', object paths always start with it. */
export function decodeRef(ref: ElementRef): ObjectRef {
  const slash = ref.indexOf('/');
  if (slash <= 0) throw new Error(`Not a Linux element reference: '${ref}'`);
  return { bus: ref.slice(0, slash), path: ref.slice(slash) };
}

/** One node of an application's accessible tree, as Cache.GetItems describes it. */
export interface AtspiNode {
  ref: ObjectRef;
  parent: ObjectRef;
  indexInParent: number;
  /** How many children the application says the node has (-1: it does not say). */
  childCount: number;
  interfaces: string[];
  name: string;
  role: number;
  /** The two 32-bit AtspiStateSet words. */
  states: [number, number];
}

export interface Extents {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** True for the DBus errors that mean the object or its application no longer exists. */
export function isGoneError(error: unknown): boolean {
  return error instanceof DBusCallError && GONE_ERRORS.has(error.type);
}

/** A gone object reads as null; any other error is thrown. */
export function unlessGone(error: unknown): null {
  if (isGoneError(error)) return null;
  throw error;
}

/** GetExtents' `(iiii)`. */
function toExtents(box: unknown): Extents {
  const [x, y, width, height] = box as number[];
  return { x: x ?? 0, y: y ?? 0, width: width ?? 0, height: height ?? 0 };
}

/** An `(so)` reference as D-Bus gives it. */
export function asRef(value: unknown): ObjectRef {
  const [bus, path] = value as [string, string];
  return { bus, path };
}

export class AtspiClient {
  private constructor(
    private readonly connection: AtspiConnection,
    private readonly roleNames = new Map<number, string>(),
  ) {}

  /** See AtspiConnection.connect: the accessibility bus, and the events given. */
  static async connect(
    sessionBusAddress: string,
    timeoutMs: number,
    options: { events?: readonly string[] } = {},
  ): Promise<AtspiClient> {
    return new AtspiClient(await AtspiConnection.connect(sessionBusAddress, timeoutMs, options));
  }

  /** Whether the events asked for at connect reach this client. */
  get tracksEvents(): boolean {
    return this.connection.tracksEvents;
  }

  /**
   * The same connections and caches with every call bounded by `timeoutMs` as well (a caller's
   * time left); never longer than the configured per-call timeout.
   */
  bounded(timeoutMs: number): AtspiClient {
    const connection = this.connection.bounded(timeoutMs);
    return connection === this.connection ? this : new AtspiClient(connection, this.roleNames);
  }

  /** Signals of the accessibility bus, in the order they came (AtspiConnection.onSignal). */
  onSignal(listener: (signal: IncomingMessage) => void): void {
    this.connection.onSignal(listener);
  }

  close(): void {
    this.connection.close();
  }

  /** A raw method call (atspi.tree.ts reads the cache with it). */
  call(...args: Parameters<AtspiConnection['call']>): Promise<unknown[]> {
    return this.connection.call(...args);
  }

  /** The applications registered on the bus, in the registry's order. */
  async applications(): Promise<ObjectRef[]> {
    const [children] = await this.call(
      REGISTRY.name,
      REGISTRY.rootPath,
      IFACE.accessible,
      'GetChildren',
    );
    return (children as unknown[]).map(asRef);
  }

  /**
   * The application's name, asked over the bus, not the application's own socket: the answer
   * comes after every event the application sent before it, so onSignal() listeners have seen
   * them all by then.
   */
  async appName(app: ObjectRef): Promise<string> {
    const [variant] = await this.connection.callOnBus({
      destination: app.bus,
      path: app.path,
      interface: IFACE.properties,
      member: 'Get',
      signature: 'ss',
      body: [IFACE.accessible, 'Name'],
    });
    return String((variant as { value: unknown }).value);
  }

  async name(ref: ObjectRef): Promise<string> {
    const [variant] = await this.call(ref.bus, ref.path, IFACE.properties, 'Get', 'ss', [
      IFACE.accessible,
      'Name',
    ]);
    return String((variant as { value: unknown }).value);
  }

  async role(ref: ObjectRef): Promise<number> {
    const [role] = await this.call(ref.bus, ref.path, IFACE.accessible, 'GetRole');
    return Number(role);
  }

  /** The role's name if roleName() asked it already. */
  knownRoleName(role: number): string | undefined {
    return this.roleNames.get(role);
  }

  /** The role's name ('push button' ...); names are fixed per role number, so cached. */
  async roleName(ref: ObjectRef, role: number): Promise<string> {
    const known = this.roleNames.get(role);
    if (known !== undefined) return known;
    const [name] = await this.call(ref.bus, ref.path, IFACE.accessible, 'GetRoleName');
    this.roleNames.set(role, String(name));
    return String(name);
  }

  async states(ref: ObjectRef): Promise<[number, number]> {
    const [words] = await this.call(ref.bus, ref.path, IFACE.accessible, 'GetState');
    const [low, high] = words as number[];
    return [low ?? 0, high ?? 0];
  }

  async interfaces(ref: ObjectRef): Promise<string[]> {
    const [names] = await this.call(ref.bus, ref.path, IFACE.accessible, 'GetInterfaces');
    return names as string[];
  }

  async extents(ref: ObjectRef): Promise<Extents> {
    const [box] = await this.call(ref.bus, ref.path, IFACE.component, 'GetExtents', 'u', [
      COORD_TYPE_SCREEN,
    ]);
    return toExtents(box);
  }

  /** The bounds of many objects at once, each Extents or its error, in their order. */
  async extentsOf(refs: readonly ObjectRef[]): Promise<Array<Extents | Error>> {
    const outcomes = await this.connection.callOnObjects(refs, IFACE.component, 'GetExtents', 'u', [
      COORD_TYPE_SCREEN,
    ]);
    return outcomes.map((outcome) => (outcome instanceof Error ? outcome : toExtents(outcome[0])));
  }

  /**
   * Learns the name of every role of `nodes` not known yet, asking all the nodes with such a
   * role in one batch (once per role: the names are kept). A role whose nodes are all gone
   * stays unknown; any other error is thrown.
   */
  async learnRoleNames(nodes: ReadonlyArray<Pick<AtspiNode, 'ref' | 'role'>>): Promise<void> {
    const asked = nodes.filter((node) => !this.roleNames.has(node.role));
    if (asked.length === 0) return;
    const outcomes = await this.connection.callOnObjects(
      asked.map((node) => node.ref),
      IFACE.accessible,
      'GetRoleName',
    );
    outcomes.forEach((outcome, i) => {
      if (outcome instanceof Error) {
        if (!isGoneError(outcome)) throw outcome;
      } else {
        this.roleNames.set((asked[i] as AtspiNode).role, String(outcome[0]));
      }
    });
  }

  async attributes(ref: ObjectRef): Promise<Record<string, string>> {
    const [attributes] = await this.call(ref.bus, ref.path, IFACE.accessible, 'GetAttributes');
    return (attributes as Record<string, string> | undefined) ?? {};
  }

  /** The object's parent (the application root's parent is the registry's desktop). */
  async parent(ref: ObjectRef): Promise<ObjectRef> {
    const [variant] = await this.call(ref.bus, ref.path, IFACE.properties, 'Get', 'ss', [
      IFACE.accessible,
      'Parent',
    ]);
    return asRef((variant as { value: unknown }).value);
  }

  /** The deepest object of the component's subtree at a screen point, if any. */
  async accessibleAtPoint(ref: ObjectRef, x: number, y: number): Promise<ObjectRef | undefined> {
    const [hit] = await this.call(
      ref.bus,
      ref.path,
      IFACE.component,
      'GetAccessibleAtPoint',
      'iiu',
      [x, y, COORD_TYPE_SCREEN],
    );
    const found = asRef(hit);
    return found.path === NULL_PATH || found.bus === '' ? undefined : found;
  }

  /** A text object's whole text, its caret and its first selection ([start, end) characters). */
  async textState(
    ref: ObjectRef,
  ): Promise<{ text: string; caret: number; selection?: [number, number] }> {
    const [[text], [caret], [count]] = await Promise.all([
      this.call(ref.bus, ref.path, IFACE.text, 'GetText', 'ii', [0, -1]),
      this.call(ref.bus, ref.path, IFACE.properties, 'Get', 'ss', [IFACE.text, 'CaretOffset']),
      this.call(ref.bus, ref.path, IFACE.text, 'GetNSelections'),
    ]);
    const state = { text: String(text), caret: Number((caret as { value: unknown }).value) };
    if (Number(count) < 1) return state;
    const [start, end] = await this.call(ref.bus, ref.path, IFACE.text, 'GetSelection', 'i', [0]);
    return Number(end) > Number(start)
      ? { ...state, selection: [Number(start), Number(end)] }
      : state;
  }

  /** A text object's whole text. */
  async text(ref: ObjectRef): Promise<string> {
    const [text] = await this.call(ref.bus, ref.path, IFACE.text, 'GetText', 'ii', [0, -1]);
    return String(text);
  }

  async grabFocus(ref: ObjectRef): Promise<boolean> {
    const [ok] = await this.call(ref.bus, ref.path, IFACE.component, 'GrabFocus');
    return ok === true;
  }
}

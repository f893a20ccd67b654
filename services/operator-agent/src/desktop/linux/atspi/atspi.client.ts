/**
 * A thin AT-SPI client: raw method calls (no proxy objects, which introspect every node and
 * cannot reach Chromium's Properties), each with a timeout. Calls to an application go over its
 * peer-to-peer socket when it offers one (as libatspi does): no bus daemon in between, which
 * halves the hops of a listing's hundreds of calls. The bus still carries the registry and any
 * application without that socket.
 */
import { AppError } from '@screenfleet/contracts';
import { DesktopUnavailableError } from '../../desktop';
import {
  A11Y_BUS,
  COORD_TYPE_SCREEN,
  DBUS_DRIVER,
  GONE_ERRORS,
  IFACE,
  NULL_PATH,
  REGISTRY,
  ROOT_PATH,
} from './atspi.constants';
import {
  DBusCallError,
  DISCONNECTED,
  NO_REPLY,
  openDBusConnection,
  type CallOutcome,
  type DBusCall,
  type DBusConnection,
  type IncomingMessage,
} from '../dbus/dbus.connection';

/** An accessible object: the unique bus name of its application and its object path. */
export interface ObjectRef {
  bus: string;
  path: string;
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

/** Registered first and always: without it Chromium does not answer Cache.GetItems. */
const CHILDREN_CHANGED = 'object:children-changed';

/** True for the DBus errors that mean the object or its application no longer exists. */
export function isGoneError(error: unknown): boolean {
  return error instanceof DBusCallError && GONE_ERRORS.has(error.type);
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
  private readonly roleNames = new Map<number, string>();
  /** Open peer-to-peer connections by the app's unique bus name. */
  private readonly peers = new Map<string, DBusConnection>();
  private readonly opening = new Map<string, Promise<DBusConnection>>();
  /** Apps without a peer-to-peer socket (or whose socket failed): reached over the bus. */
  private readonly noPeer = new Set<string>();
  private broken: Error | undefined;
  /** Whether the events asked for at connect reach this client. */
  tracksEvents = false;

  private constructor(
    private readonly bus: DBusConnection,
    private timeoutMs: number,
  ) {}

  /**
   * The same connections and caches with every call bounded by `timeoutMs` as well (a caller's
   * time left); never longer than the configured per-call timeout.
   */
  bounded(timeoutMs: number): AtspiClient {
    if (timeoutMs >= this.timeoutMs) return this;
    const view = Object.create(this) as AtspiClient;
    view.timeoutMs = Math.max(0, Math.floor(timeoutMs));
    return view;
  }

  /**
   * Connects to the accessibility bus announced on the given session bus and registers for
   * children-changed (Chromium only answers Cache.GetItems once some client has registered)
   * and for `events` ('object:state-changed' ...), which onSignal() listeners then get with
   * the cache's AddAccessible and RemoveAccessible (tracksEvents says whether that worked).
   */
  static async connect(
    sessionBusAddress: string,
    timeoutMs: number,
    options: { events?: readonly string[] } = {},
  ): Promise<AtspiClient> {
    const address = await getA11yBusAddress(sessionBusAddress, timeoutMs);
    const bus = await openDBusConnection(address, { hello: true, timeoutMs });
    const client = new AtspiClient(bus, timeoutMs);
    // Later calls would only time out: remember the loss and fail them at once.
    bus.onClose((reason) => {
      client.broken = reason;
    });
    try {
      await client.registerEvent(CHILDREN_CHANGED);
      if (options.events) client.tracksEvents = await client.watch(options.events);
    } catch (error) {
      client.close();
      throw error;
    }
    return client;
  }

  /**
   * Signals of the accessibility bus (applications' events), in the order they came: a reply
   * asked over the bus after an application sent an event resolves after its listeners ran.
   */
  onSignal(listener: (signal: IncomingMessage) => void): void {
    this.bus.onSignal(listener);
  }

  private async registerEvent(event: string): Promise<void> {
    await this.call(REGISTRY.name, REGISTRY.path, IFACE.registry, 'RegisterEvent', 'sass', [
      event,
      [],
      '',
    ]);
  }

  /** Registers the events and has the bus route them here; false when it could not. */
  private async watch(events: readonly string[]): Promise<boolean> {
    try {
      await Promise.all([
        ...events
          .filter((event) => event !== CHILDREN_CHANGED)
          .map((event) => this.registerEvent(event)),
        ...[IFACE.eventObject, IFACE.cache].map((iface) =>
          this.onBus({
            ...DBUS_DRIVER,
            member: 'AddMatch',
            signature: 's',
            body: [`type='signal',interface='${iface}'`],
          }),
        ),
      ]);
      return true;
    } catch {
      return false;
    }
  }

  close(): void {
    this.bus.close();
    for (const peer of this.peers.values()) peer.close();
    this.peers.clear();
  }

  async call(
    destination: string,
    path: string,
    iface: string,
    member: string,
    signature = '',
    body: unknown[] = [],
  ): Promise<unknown[]> {
    const request = { path, interface: iface, member, signature, body };
    const peer = this.peerFor(destination);
    try {
      const connection = peer === undefined ? undefined : await peer;
      if (connection !== undefined) {
        try {
          return await connection.call(request, this.timeoutMs);
        } catch (error) {
          // The app closed its socket (quitting, or restarting its bridge): ask over the bus,
          // which says whether the app is gone.
          if (!(error instanceof DBusCallError && error.type === DISCONNECTED)) throw error;
        }
      }
      return await this.onBus({ destination, ...request });
    } catch (error) {
      throw this.translate(error);
    }
  }

  /**
   * The same method on many objects of one application, sent at once: each object's outcome
   * in order (the reply's body, or the error, translated as call() would throw it).
   */
  private async callOnPaths(
    app: string,
    paths: readonly string[],
    iface: string,
    member: string,
    signature = '',
    body: unknown[] = [],
  ): Promise<CallOutcome[]> {
    const requests = paths.map((path) => ({ path, interface: iface, member, signature, body }));
    const connection = await this.peerFor(app)?.catch((error: unknown) => {
      throw this.translate(error);
    });
    const outcomes =
      connection === undefined
        ? await this.onBusAll(requests.map((request) => ({ destination: app, ...request })))
        : await connection.callAll(requests, this.timeoutMs);
    if (!outcomes.some((outcome) => outcome instanceof Error)) return outcomes;
    return Promise.all(
      outcomes.map(async (outcome, i) => {
        if (!(outcome instanceof Error)) return outcome;
        // The app closed its socket meanwhile: ask over the bus, as call() does.
        if (
          connection !== undefined &&
          outcome instanceof DBusCallError &&
          outcome.type === DISCONNECTED
        ) {
          return this.onBus({ destination: app, ...(requests[i] as DBusCall) }).catch(
            (error: unknown) => this.translate(error) as Error,
          );
        }
        return this.translate(outcome) as Error;
      }),
    );
  }

  private async onBusAll(requests: DBusCall[]): Promise<CallOutcome[]> {
    if (this.broken !== undefined) {
      throw new DesktopUnavailableError('The accessibility bus connection is lost', {
        cause: this.broken,
      });
    }
    return this.bus.callAll(requests, this.timeoutMs);
  }

  private async onBus(request: DBusCall): Promise<unknown[]> {
    if (this.broken !== undefined) {
      throw new DesktopUnavailableError('The accessibility bus connection is lost', {
        cause: this.broken,
      });
    }
    return this.bus.call(request, this.timeoutMs);
  }

  /**
   * A desktop call that does not answer in time is a failed operation (500 with the reason),
   * not a 'timeout': that code (504) is the gateway's own wait and the agent's deadline
   * refusal. The bus going away mid-call is the desktop becoming unavailable.
   */
  private translate(error: unknown): unknown {
    if (!(error instanceof DBusCallError)) return error;
    if (error.type === NO_REPLY) return new AppError('operation_failed', error.message);
    if (error.type === DISCONNECTED) {
      return new DesktopUnavailableError('The accessibility bus connection is lost', {
        cause: error,
      });
    }
    return error;
  }

  /**
   * The app's peer-to-peer connection, opened on first use; undefined to use the bus. Only
   * unique names (':1.42') are apps; well-known names (the registry) live on the bus.
   */
  private peerFor(app: string): Promise<DBusConnection | undefined> | undefined {
    if (!app.startsWith(':') || this.noPeer.has(app)) return undefined;
    const open = this.peers.get(app);
    if (open !== undefined && !open.closed) return Promise.resolve(open);
    let opening = this.opening.get(app);
    if (opening === undefined) {
      opening = this.openPeer(app);
      this.opening.set(app, opening);
    }
    // An app that did not answer would not answer over the bus either: fail now, not twice.
    return opening.catch((error: unknown) => {
      if (error instanceof DBusCallError && error.type === NO_REPLY) throw error;
      return undefined;
    });
  }

  private async openPeer(app: string): Promise<DBusConnection> {
    try {
      const [address] = await this.bus.call(
        {
          destination: app,
          path: ROOT_PATH,
          interface: IFACE.application,
          member: 'GetApplicationBusAddress',
        },
        this.timeoutMs,
      );
      if (typeof address !== 'string' || address === '') throw new Error('no peer address');
      const peer = await openDBusConnection(address, { hello: false, timeoutMs: this.timeoutMs });
      peer.onClose(() => {
        if (this.peers.get(app) === peer) this.peers.delete(app);
      });
      this.peers.set(app, peer);
      return peer;
    } catch (error) {
      // No socket, or it does not answer: the bus reaches the app all the same.
      this.noPeer.add(app);
      throw error;
    } finally {
      this.opening.delete(app);
    }
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
    try {
      const [variant] = await this.onBus({
        destination: app.bus,
        path: app.path,
        interface: IFACE.properties,
        member: 'Get',
        signature: 'ss',
        body: [IFACE.accessible, 'Name'],
      });
      return String((variant as { value: unknown }).value);
    } catch (error) {
      throw this.translate(error);
    }
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
    const outcomes = await this.callOnObjects(refs, IFACE.component, 'GetExtents', 'u', [
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
    const outcomes = await this.callOnObjects(
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

  /** The same method on many objects (of any apps) at once: each outcome in their order. */
  private async callOnObjects(
    refs: readonly ObjectRef[],
    iface: string,
    member: string,
    signature = '',
    body: unknown[] = [],
  ): Promise<CallOutcome[]> {
    const byApp = new Map<string, number[]>();
    refs.forEach((ref, i) => {
      const indexes = byApp.get(ref.bus);
      if (indexes) indexes.push(i);
      else byApp.set(ref.bus, [i]);
    });
    const outcomes = new Array<CallOutcome>(refs.length);
    await Promise.all(
      [...byApp].map(async ([app, indexes]) => {
        const paths = indexes.map((i) => (refs[i] as ObjectRef).path);
        const answers = await this.callOnPaths(app, paths, iface, member, signature, body);
        answers.forEach((answer, k) => {
          outcomes[indexes[k] as number] = answer;
        });
      }),
    );
    return outcomes;
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

async function getA11yBusAddress(sessionBusAddress: string, timeoutMs: number): Promise<string> {
  const session = await openDBusConnection(sessionBusAddress, { hello: true, timeoutMs });
  try {
    const [address] = await session.call(
      {
        destination: A11Y_BUS.name,
        path: A11Y_BUS.path,
        interface: A11Y_BUS.iface,
        member: 'GetAddress',
      },
      timeoutMs,
    );
    if (typeof address !== 'string' || address === '') {
      throw new Error('org.a11y.Bus.GetAddress returned no address');
    }
    return address;
  } finally {
    session.close();
  }
}

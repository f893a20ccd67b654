/**
 * The connections under the AT-SPI client: raw method calls (no proxy objects, which introspect
 * every node and cannot reach Chromium's Properties), each with a timeout. Calls to an
 * application go over its peer-to-peer socket when it offers one (as libatspi does): no bus
 * daemon in between, which halves the hops of a listing's hundreds of calls. The bus still
 * carries the registry and any application without that socket.
 */
import { AppError } from '@screenfleet/contracts';
import { DesktopUnavailableError } from '../../desktop';
import { A11Y_BUS, DBUS_DRIVER, IFACE, REGISTRY, ROOT_PATH } from './atspi.constants';
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

/** Registered first and always: without it Chromium does not answer Cache.GetItems. */
const CHILDREN_CHANGED = 'object:children-changed';

export class AtspiConnection {
  /** Open peer-to-peer connections by the app's unique bus name. */
  private readonly peers = new Map<string, DBusConnection>();
  private readonly opening = new Map<string, Promise<DBusConnection>>();
  /** Apps without a peer-to-peer socket (or whose socket failed): reached over the bus. */
  private readonly noPeer = new Set<string>();
  private broken: Error | undefined;
  /** Whether the events asked for at connect reach this connection. */
  tracksEvents = false;

  private constructor(
    private readonly bus: DBusConnection,
    private timeoutMs: number,
  ) {}

  /**
   * The same connections with every call bounded by `timeoutMs` as well (a caller's time left);
   * never longer than the configured per-call timeout.
   */
  bounded(timeoutMs: number): AtspiConnection {
    if (timeoutMs >= this.timeoutMs) return this;
    const view = Object.create(this) as AtspiConnection;
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
  ): Promise<AtspiConnection> {
    const address = await getA11yBusAddress(sessionBusAddress, timeoutMs);
    const bus = await openDBusConnection(address, { hello: true, timeoutMs });
    const connection = new AtspiConnection(bus, timeoutMs);
    // Later calls would only time out: remember the loss and fail them at once.
    bus.onClose((reason) => {
      connection.broken = reason;
    });
    try {
      await connection.registerEvent(CHILDREN_CHANGED);
      if (options.events) connection.tracksEvents = await connection.watch(options.events);
    } catch (error) {
      connection.close();
      throw error;
    }
    return connection;
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

  /** A call over the bus, never the application's own socket (see AtspiClient.appName). */
  async callOnBus(request: DBusCall): Promise<unknown[]> {
    try {
      return await this.onBus(request);
    } catch (error) {
      throw this.translate(error);
    }
  }

  /** The same method on many objects (of any apps) at once: each outcome in their order. */
  async callOnObjects(
    refs: ReadonlyArray<{ bus: string; path: string }>,
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
        const paths = indexes.map((i) => (refs[i] as { path: string }).path);
        const answers = await this.callOnPaths(app, paths, iface, member, signature, body);
        answers.forEach((answer, k) => {
          outcomes[indexes[k] as number] = answer;
        });
      }),
    );
    return outcomes;
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

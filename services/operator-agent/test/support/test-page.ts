import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { renderTestPage, type PageElement, type PageOptions } from './page-content';

/** What the page's own keydown listener saw: the ground truth the desktop tests assert on. */
export interface KeydownReport {
  key: string;
  code: string;
  ctrlKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
  metaKey: boolean;
  repeat: boolean;
  /** `document.activeElement.id` when the key arrived ('' for the body). */
  activeId: string;
  /** Epoch milliseconds (performance.timeOrigin + performance.now()) in the page. */
  at: number;
  seq: number;
}

/** An input's value as the page's input listener saw it, numbered in the page. */
interface ValueReport {
  id: string;
  value: string;
  seq: number;
}

/** One entry of the page's batch of reports (POST /reports). */
type PageReport = { kind: 'keydown'; body: KeydownReport } | { kind: 'value'; body: ValueReport };

export {
  LARGE_PAGE,
  PAGE_BUTTON,
  PAGE_FIELDS,
  PAGE_TITLE,
  type PageElement,
  type PageOptions,
} from './page-content';

export interface TestPageServer {
  readonly url: string;
  /** The page's keyboard-reachable elements in document order. */
  readonly elements: readonly PageElement[];
  /** Resolves once the page has loaded and its command channel is open. */
  waitForReady(timeoutMs: number): Promise<void>;
  /** The first not yet consumed keydown matching `predicate` (consumes it). */
  waitForKeydown(
    predicate: (r: KeydownReport) => boolean,
    timeoutMs: number,
  ): Promise<KeydownReport>;
  /** Every keydown received so far, consumed or not, in arrival order. */
  keydowns(): readonly KeydownReport[];
  /** The ids of the elements clicked (innermost with an id; '' for none), in order. */
  clicks(): readonly string[];
  /** An input's value as the page's own input event last reported it. */
  valueOf(id: string): string | undefined;
  /** Puts a banner over the element (fixed, on top); uncoverElement removes it. */
  coverElement(id: string, timeoutMs?: number): Promise<void>;
  uncoverElement(id: string, timeoutMs?: number): Promise<void>;
  /** Gives an input a maxlength: the page then keeps only that much of what is typed. */
  limitLength(id: string, length: number, timeoutMs?: number): Promise<void>;
  /** Consumes every report received so far. */
  clearKeydowns(): void;
  /** Removes the element (and its label) from the page; resolves when the page confirms. */
  removeElement(id: string, timeoutMs?: number): Promise<void>;
  /** Puts a removed element (and its label) back where it was. */
  restoreElement(id: string, timeoutMs?: number): Promise<void>;
  /** Replaces the element with a copy of itself: the same id, label and place, a new node. */
  replaceElement(id: string, timeoutMs?: number): Promise<void>;
  /** Keeps the page's thread busy for `ms` from the acknowledgement on. */
  busy(ms: number, timeoutMs?: number): Promise<void>;
  /** Gives the element a new accessible name (an input's label text); resolves when done. */
  renameElement(id: string, label: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

interface Waiter<T> {
  test: (value: T) => boolean;
  resolve: (value: T) => void;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

function withTimeout<T>(what: string, promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Timed out after ${timeoutMs} ms: ${what}`)),
      timeoutMs,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A tiny HTTP server on 127.0.0.1:<free port> serving the page and collecting its reports. */
export async function startTestPage(options: PageOptions = {}): Promise<TestPageServer> {
  const page = renderTestPage(options);
  const reports: KeydownReport[] = [];
  const clicks: string[] = [];
  const values = new Map<string, ValueReport>();
  const consumed = new Set<KeydownReport>();
  let keydownWaiters: Waiter<KeydownReport>[] = [];
  let ackWaiters: Waiter<string>[] = [];
  let ready = false;
  let readyWaiters: (() => void)[] = [];
  const streams = new Set<ServerResponse>();

  const onKeydown = (report: KeydownReport) => {
    const waiter = keydownWaiters.find((w) => w.test(report));
    if (waiter) {
      consumed.add(report);
      keydownWaiters = keydownWaiters.filter((w) => w !== waiter);
      waiter.resolve(report);
    }
    reports.push(report);
  };
  const onValue = (report: ValueReport) => {
    if ((values.get(report.id)?.seq ?? -1) < report.seq) values.set(report.id, report);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === 'GET' && req.url === '/') {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
      });
      res.end(page.html);
      return;
    }
    if (req.method === 'GET' && req.url === '/commands') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write(': open\n\n');
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    if (req.method === 'POST' && req.url === '/reports') {
      const batch = (await readJson(req)) as PageReport[];
      res.writeHead(204).end();
      for (const report of batch) {
        if (report.kind === 'keydown') onKeydown(report.body);
        else onValue(report.body);
      }
      return;
    }
    if (req.method === 'POST' && req.url === '/click') {
      const { id } = (await readJson(req)) as { id: string };
      res.writeHead(204).end();
      clicks.push(id);
      return;
    }
    if (req.method === 'POST' && req.url === '/ack') {
      const { done } = (await readJson(req)) as { done: string };
      res.writeHead(204).end();
      const matching = ackWaiters.filter((w) => w.test(done));
      ackWaiters = ackWaiters.filter((w) => !matching.includes(w));
      matching.forEach((w) => w.resolve(done));
      return;
    }
    if (req.method === 'POST' && req.url === '/ready') {
      await readJson(req);
      res.writeHead(204).end();
      ready = true;
      readyWaiters.forEach((resolve) => resolve());
      readyWaiters = [];
      return;
    }
    res.writeHead(404).end();
  };

  /** Sends a command to the page; resolves when the page acknowledges `done`. */
  const command = (body: object, done: string, what: string, timeoutMs: number) => {
    if (streams.size === 0) return Promise.reject(new Error('The test page is not connected'));
    const acked = new Promise<string>((resolve) => {
      ackWaiters.push({ test: (value) => value === done, resolve });
    });
    for (const stream of streams) stream.write(`data: ${JSON.stringify(body)}\n\n`);
    return withTimeout(what, acked, timeoutMs).then(() => undefined);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(400);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/`,
    elements: page.elements,
    waitForReady: (timeoutMs) =>
      ready
        ? Promise.resolve()
        : withTimeout(
            'the test page to load',
            new Promise<void>((resolve) => readyWaiters.push(resolve)),
            timeoutMs,
          ),
    waitForKeydown: (predicate, timeoutMs) => {
      const found = reports.find((r) => !consumed.has(r) && predicate(r));
      if (found) {
        consumed.add(found);
        return Promise.resolve(found);
      }
      let waiter: Waiter<KeydownReport> | undefined;
      const arrived = new Promise<KeydownReport>((resolve) => {
        waiter = { test: predicate, resolve };
        keydownWaiters.push(waiter);
      });
      return withTimeout('a matching keydown on the page', arrived, timeoutMs).catch(
        (error: unknown) => {
          keydownWaiters = keydownWaiters.filter((w) => w !== waiter);
          const seen = reports.map((r) => JSON.stringify(r)).slice(-10);
          throw new Error(
            `${(error as Error).message}; last keydowns seen:\n${seen.join('\n') || '(none)'}`,
          );
        },
      );
    },
    keydowns: () => reports,
    clicks: () => clicks,
    valueOf: (id) => values.get(id)?.value,
    coverElement: (id, timeoutMs = 5000) =>
      command({ verb: 'cover', id }, `cover ${id}`, `the page to cover #${id}`, timeoutMs),
    limitLength: (id, length, timeoutMs = 5000) =>
      command(
        { verb: 'maxlength', id, value: length },
        `maxlength ${id}`,
        `the page to limit #${id}`,
        timeoutMs,
      ),
    uncoverElement: (id, timeoutMs = 5000) =>
      command({ verb: 'uncover', id }, `uncover ${id}`, `the page to uncover #${id}`, timeoutMs),
    clearKeydowns: () => reports.forEach((r) => consumed.add(r)),
    removeElement: (id, timeoutMs = 5000) =>
      command({ verb: 'remove', id }, `remove ${id}`, `the page to remove #${id}`, timeoutMs),
    restoreElement: (id, timeoutMs = 5000) =>
      command({ verb: 'restore', id }, `restore ${id}`, `the page to restore #${id}`, timeoutMs),
    replaceElement: (id, timeoutMs = 5000) =>
      command({ verb: 'replace', id }, `replace ${id}`, `the page to replace #${id}`, timeoutMs),
    busy: (ms, timeoutMs = 5000) =>
      command({ verb: 'busy', id: 'page', ms }, 'busy page', 'the page to get busy', timeoutMs),
    renameElement: (id, label, timeoutMs = 5000) =>
      command(
        { verb: 'rename', id, label },
        `rename ${id}`,
        `the page to rename #${id}`,
        timeoutMs,
      ),
    close: () =>
      new Promise<void>((resolve) => {
        streams.forEach((stream) => stream.end());
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

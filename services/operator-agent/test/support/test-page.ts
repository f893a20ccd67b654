import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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

export const PAGE_TITLE = 'Operator test page';

/** Ids of the page's inputs and button, in document order. */
export const PAGE_FIELDS = [
  { id: 'first', label: 'First name' },
  { id: 'last', label: 'Last name' },
  { id: 'email', label: 'Email' },
] as const;
export const PAGE_BUTTON = { id: 'submit', label: 'Submit' } as const;

// No <form>: Enter in an input must not navigate away. Reports go out with fetch(keepalive) to
// the same origin; commands come in over Server-Sent Events, so removeElement is immediate.
const PAGE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${PAGE_TITLE}</title>
<style>body{font:16px sans-serif;margin:24px} label{display:block;margin-top:12px}</style>
</head><body>
<h1>${PAGE_TITLE}</h1>
${PAGE_FIELDS.map((f) => `<label for="${f.id}">${f.label}</label><input id="${f.id}" type="text">`).join('\n')}
<p><button id="${PAGE_BUTTON.id}" type="button">${PAGE_BUTTON.label}</button></p>
<script>
let seq = 0;
function post(path, body) {
  return fetch(path, { method: 'POST', keepalive: true, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
window.addEventListener('keydown', (e) => {
  const active = document.activeElement;
  post('/report', { key: e.key, code: e.code, ctrlKey: e.ctrlKey, shiftKey: e.shiftKey,
    altKey: e.altKey, metaKey: e.metaKey, repeat: e.repeat,
    activeId: active && active.id ? active.id : '', at: performance.timeOrigin + performance.now(),
    seq: ++seq });
}, true);
const commands = new EventSource('/commands');
commands.onmessage = (message) => {
  const command = JSON.parse(message.data);
  if (command.remove) {
    const element = document.getElementById(command.remove);
    if (element) {
      const label = document.querySelector('label[for="' + command.remove + '"]');
      if (label) label.remove();
      element.remove();
    }
    post('/ack', { removed: command.remove, existed: Boolean(element) });
  }
};
commands.onopen = () => post('/ready', {});
</script>
</body></html>`;

export interface TestPageServer {
  readonly url: string;
  /** Resolves once the page has loaded and its command channel is open. */
  waitForReady(timeoutMs: number): Promise<void>;
  /** The first not yet consumed keydown matching `predicate` (consumes it). */
  waitForKeydown(
    predicate: (r: KeydownReport) => boolean,
    timeoutMs: number,
  ): Promise<KeydownReport>;
  /** Every keydown received so far, consumed or not, in arrival order. */
  keydowns(): readonly KeydownReport[];
  /** Consumes every report received so far. */
  clearKeydowns(): void;
  /** Removes the element (and its label) from the page; resolves when the page confirms. */
  removeElement(id: string, timeoutMs?: number): Promise<void>;
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
export async function startTestPage(): Promise<TestPageServer> {
  const reports: KeydownReport[] = [];
  const consumed = new Set<KeydownReport>();
  let keydownWaiters: Waiter<KeydownReport>[] = [];
  let ackWaiters: Waiter<string>[] = [];
  let ready = false;
  let readyWaiters: (() => void)[] = [];
  const streams = new Set<ServerResponse>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === 'GET' && req.url === '/') {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
      });
      res.end(PAGE_HTML);
      return;
    }
    if (req.method === 'GET' && req.url === '/commands') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write(': open\n\n');
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    if (req.method === 'POST' && req.url === '/report') {
      const report = (await readJson(req)) as KeydownReport;
      res.writeHead(204).end();
      const waiter = keydownWaiters.find((w) => w.test(report));
      if (waiter) {
        consumed.add(report);
        keydownWaiters = keydownWaiters.filter((w) => w !== waiter);
        waiter.resolve(report);
      }
      reports.push(report);
      return;
    }
    if (req.method === 'POST' && req.url === '/ack') {
      const ack = (await readJson(req)) as { removed: string };
      res.writeHead(204).end();
      const matching = ackWaiters.filter((w) => w.test(ack.removed));
      ackWaiters = ackWaiters.filter((w) => !matching.includes(w));
      matching.forEach((w) => w.resolve(ack.removed));
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
    clearKeydowns: () => reports.forEach((r) => consumed.add(r)),
    removeElement: (id, timeoutMs = 5000) => {
      if (streams.size === 0) return Promise.reject(new Error('The test page is not connected'));
      const acked = new Promise<string>((resolve) => {
        ackWaiters.push({ test: (removed) => removed === id, resolve });
      });
      for (const stream of streams) stream.write(`data: ${JSON.stringify({ remove: id })}\n\n`);
      return withTimeout(`the page to remove #${id}`, acked, timeoutMs).then(() => undefined);
    },
    close: () =>
      new Promise<void>((resolve) => {
        streams.forEach((stream) => stream.end());
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

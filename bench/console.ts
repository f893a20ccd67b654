/**
 * bench:console — the console's Fleet view rendering 1,000 devices in Debian's Chromium
 * (playwright-core, headless), measured in the page with the Performance API: from the moment
 * the fleet's data is in the view to the rows in the DOM (`fleet:committed`) and to the frame
 * after it, painted (`fleet:painted`, style and layout included). The budget: 100 ms.
 *
 * The gateway is the real one (test/support/gateway, on a vhost of the local RabbitMQ) serving
 * the built console; GET /devices is answered by the browser's route handler with
 * BENCH_CONSOLE_DEVICES (1,000) synthetic devices (services/gateway/console/src/fleet.fixture.ts),
 * so what is measured is the view, not the store. Each of BENCH_CONSOLE_LOADS (7) loads is a
 * fresh browser context (cold page). Traffic only to 127.0.0.1. One JSON line last on stdout.
 */
import os from 'node:os';
import type { Browser } from 'playwright-core';
import { buildFleet } from '../services/gateway/console/src/fleet.fixture';
import { rabbitmqctl } from '../test/services/rabbitmqctl';
import { launchChromium, openConsole } from '../test/support/console-browser';
import { startGateway, tokens } from '../test/support/gateway';
import { median, percentiles } from './stats';

const devices = Number(process.env.BENCH_CONSOLE_DEVICES ?? 1000);
const loads = Number(process.env.BENCH_CONSOLE_LOADS ?? 7);
const budgetMs = 100;

interface Load {
  committedMs: number;
  paintedMs: number;
  /** CPU time of the page's main thread over the painted window (trace events' tdur). */
  cpuMs: number;
  /** Where the main thread's time in that window went (self time by kind, wall clock). */
  work: Record<WorkKind, number>;
  /** Device rows in the DOM once painted. */
  rows: number;
  /** The table's rows as it tells assistive technology (aria-rowcount, header included). */
  rowCount: number;
}

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  ts: number;
  dur?: number;
  tdur?: number;
  pid: number;
  tid: number;
}

/**
 * The render's window in a trace: the last `fleet:painted` measure's end and the `fleet:data`
 * mark before it, on the page's main thread. (The page opened before the traced reload may
 * still record a mark of its own: the first one in the trace can be that page's.)
 */
function renderWindow(events: TraceEvent[]): {
  pid: number;
  tid: number;
  from: number;
  to: number;
} {
  // Newest first.
  const timing = events.filter((e) => e.cat.includes('user_timing')).sort((a, b) => b.ts - a.ts);
  const end = timing.find((e) => e.name === 'fleet:painted' && (e.ph === 'e' || e.ph === 'E'));
  const mark = end && timing.find((e) => e.name === 'fleet:data' && e.ts <= end.ts);
  if (!mark || !end) throw new Error('the trace has no fleet:data mark or fleet:painted end');
  return { pid: mark.pid, tid: mark.tid, from: mark.ts, to: end.ts };
}

/**
 * The main thread's CPU time over the window: the top-level tasks' thread time (tdur), clipped
 * to it. Wall time (the Performance API's figure) grows when other processes share the CPU;
 * this does not, so it says what the render costs on an idle machine.
 */
function mainThreadCpuMs(events: TraceEvent[]): number {
  const { pid, tid, from, to } = renderWindow(events);
  // Top-level events nest (a task inside the message loop's task): count the outermost only.
  const tasks = events
    .filter(
      (e) =>
        e.pid === pid &&
        e.tid === tid &&
        e.ph === 'X' &&
        e.cat === 'toplevel' &&
        e.dur !== undefined &&
        e.dur > 0 &&
        e.tdur !== undefined,
    )
    .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
  let cpu = 0;
  let coveredTo = -Infinity;
  for (const e of tasks) {
    const end = e.ts + e.dur!;
    if (e.ts < coveredTo) continue;
    coveredTo = end;
    const overlap = Math.min(end, to) - Math.max(e.ts, from);
    if (overlap > 0) cpu += e.tdur! * (overlap / e.dur!);
  }
  return cpu / 1000;
}

const workKinds = ['script', 'style', 'layout', 'paint', 'gc', 'other'] as const;
type WorkKind = (typeof workKinds)[number];

/** DevTools' timeline events by kind; an event not named here counts as its parent's kind. */
function kindOf(name: string): WorkKind | undefined {
  if (
    /^(FunctionCall|EvaluateScript|TimerFire|FireAnimationFrame|EventDispatch|RunMicrotasks|v8\.|V8\.Execute)/.test(
      name,
    )
  )
    return 'script';
  if (/^(UpdateLayoutTree|RecalculateStyles|ParseAuthorStyleSheet)$/.test(name)) return 'style';
  // content-visibility's intersection checks are part of deciding what to lay out.
  if (/^(Layout|IntersectionObserverController::computeIntersections)$/.test(name)) return 'layout';
  if (/^(PrePaint|Paint|PaintImage|Layerize|Commit|UpdateLayer|CompositeLayers)$/.test(name))
    return 'paint';
  if (/^(MinorGC|MajorGC|V8\.GC|BlinkGC)/.test(name)) return 'gc';
  return undefined;
}

/**
 * The main thread's time over the window by kind of work, as DevTools' summary counts it: each
 * timeline event's self time (its duration less its children's), clipped to the window.
 */
function workBreakdownMs(events: TraceEvent[]): Record<WorkKind, number> {
  const { pid, tid, from, to } = renderWindow(events);
  const spans = events
    .filter(
      (e) =>
        e.pid === pid &&
        e.tid === tid &&
        e.ph === 'X' &&
        e.dur !== undefined &&
        e.ts < to &&
        e.ts + e.dur > from,
    )
    .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
  const work = Object.fromEntries(workKinds.map((k) => [k, 0])) as Record<WorkKind, number>;
  const clipped = (e: TraceEvent) => Math.min(e.ts + e.dur!, to) - Math.max(e.ts, from);
  const stack: Array<{ event: TraceEvent; kind: WorkKind; self: number }> = [];
  const close = (until: number) => {
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.event.ts + top.event.dur! > until) return;
      stack.pop();
      work[top.kind] += top.self;
    }
  };
  for (const event of spans) {
    close(event.ts);
    const parent = stack[stack.length - 1];
    const own = clipped(event);
    if (parent) parent.self -= own;
    stack.push({ event, kind: kindOf(event.name) ?? parent?.kind ?? 'other', self: own });
  }
  close(Infinity);
  const round = (n: number) => Math.round(n / 100) / 10;
  return Object.fromEntries(workKinds.map((k) => [k, round(work[k])])) as Record<WorkKind, number>;
}

async function measureLoad(browser: Browser, url: string, fleet: unknown[]): Promise<Load> {
  const opened = await openConsole(browser, url, { hash: '#/fleet', token: tokens.all.token });
  const { page } = opened;
  try {
    // GET /devices, as the gateway pages it (the view asks until the total).
    await page.route(/\/devices\?/, (route) => {
      const query = new URL(route.request().url()).searchParams;
      const offset = Number(query.get('offset') ?? 0);
      const limit = Number(query.get('limit') ?? 50);
      return route.fulfill({
        json: {
          data: fleet.slice(offset, offset + limit),
          pagination: { limit, offset, total: fleet.length },
        },
      });
    });
    await browser.startTracing(page, {
      categories: ['toplevel', 'blink.user_timing', 'devtools.timeline'],
    });
    await page.reload();
    const painted = await page.waitForFunction(() => {
      const [entry] = performance.getEntriesByName('fleet:painted', 'measure');
      const [commit] = performance.getEntriesByName('fleet:committed', 'measure');
      return entry && commit
        ? {
            paintedMs: entry.duration,
            committedMs: commit.duration,
            rows: document.querySelectorAll('.fleet [role=row][data-device]').length,
            rowCount: Number(document.querySelector('.fleet')?.getAttribute('aria-rowcount')),
          }
        : undefined;
    });
    const load = (await painted.jsonValue()) as Omit<Load, 'cpuMs' | 'work'>;
    const trace = JSON.parse((await browser.stopTracing()).toString()) as {
      traceEvents: TraceEvent[];
    };
    if (opened.errors().length > 0) throw new Error(opened.errors().join('\n'));
    return {
      ...load,
      cpuMs: mainThreadCpuMs(trace.traceEvents),
      work: workBreakdownMs(trace.traceEvents),
    };
  } finally {
    await opened.close();
  }
}

/** A temporary vhost of the local RabbitMQ: the gateway needs a broker to start. */
async function temporaryBroker(): Promise<{ url: string; remove(): Promise<void> }> {
  const vhost = `sf-bench-console-${process.pid}`;
  await rabbitmqctl(['add_vhost', vhost]);
  await rabbitmqctl(['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*']);
  return {
    url: `amqp://guest:guest@127.0.0.1:5672/${vhost}`,
    remove: () => rabbitmqctl(['delete_vhost', vhost]).then(() => undefined),
  };
}

async function main(): Promise<void> {
  // The test gateway names its connection after the run (test/services uniqueName).
  process.env.TEST_RUN_ID ??= `bench-console-${process.pid}`;
  const broker = await temporaryBroker();
  const gateway = await startGateway(broker.url);
  const browser = await launchChromium();
  try {
    const fleet = buildFleet(devices);
    const results: Load[] = [];
    for (let i = 0; i < loads; i++) {
      const load = await measureLoad(browser, gateway.url, fleet);
      if (load.rowCount !== devices + 1 || load.rows === 0) {
        throw new Error(
          `a table of ${load.rowCount} rows (${load.rows} rendered), not ${devices} + 1`,
        );
      }
      const work = workKinds.map((k) => `${k} ${load.work[k]}`).join(', ');
      process.stderr.write(
        `load ${i + 1}/${loads}: committed ${load.committedMs.toFixed(1)} ms, painted ${load.paintedMs.toFixed(1)} ms, main-thread CPU ${load.cpuMs.toFixed(1)} ms (${work}), ${load.rows} rows rendered\n`,
      );
      results.push(load);
    }
    const painted = results.map((r) => r.paintedMs);
    const committed = results.map((r) => r.committedMs);
    const cpu = results.map((r) => r.cpuMs);
    const round = (n: number) => Math.round(n * 10) / 10;
    const result = {
      bench: 'console',
      devices,
      loads,
      committed_ms: { median: round(median(committed)), ...percentiles(committed, [95]) },
      painted_ms: {
        median: round(median(painted)),
        ...percentiles(painted, [95]),
        max: round(Math.max(...painted)),
      },
      main_thread_cpu_ms: { median: round(median(cpu)), ...percentiles(cpu, [95]) },
      work_ms_median: Object.fromEntries(
        workKinds.map((k) => [k, round(median(results.map((r) => r.work[k])))]),
      ),
      rows_rendered: median(results.map((r) => r.rows)),
      load_average_1m: round(os.loadavg()[0] ?? NaN),
      cpus: os.cpus().length,
      budget_ms: budgetMs,
      ratio_to_budget: round((median(painted) / budgetMs) * 100) / 100,
      within_budget: median(painted) <= budgetMs,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await browser.close();
    await gateway.close();
    await broker.remove();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:console failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});

/**
 * Operator latency on a page of real-app size (LARGE_PAGE: about 500 labelled inputs, buttons,
 * links and list items), on a real desktop (Xvfb + AT-SPI + Chromium), end to end: HTTP ->
 * gateway in-process -> RabbitMQ -> the agent's built main.js -> the desktop. Measured:
 * - listing: the list-interactable-elements request until its answer, the page unchanged;
 * - listing after a change: the page removes an element, then the first listing without it
 *   (the agent reads the whole accessible tree again);
 * - press: the press-key-by-index request on an element deep in the list (index ~450) until the
 *   page's keydown handler ran, checking the key arrived on that element; back to back (each
 *   press waits for the rest of the agent's 25 ms after the previous key), and with a 50 ms
 *   pause before each (`spaced_press_ms`);
 * - click: the click-by-index request on a button deep in the list until its answer (the agent
 *   answers once the click is sent), checking the page saw the click on that button;
 * - type: the type-by-index request of TYPED (20 characters, accents, CJK and symbols among
 *   them) into the input until its answer (the agent answers once the input shows the text),
 *   back to back and with a 50 ms pause before each (`spaced_type_ms`);
 * and, in the same run, listing and press through the agent's Desktop adapter called directly
 * (the baseline: listElements; describe, focus, press, as the agent does). CPU per listing, per
 * press, per click and per typing (agent, Chromium's browser process and its renderer, gateway)
 * is reported too: on a busy machine it moves less than the latencies, and a typing's is mostly
 * the renderer's (the page handles every key). Bounded: LISTINGS listings, CHANGES changes and
 * PRESSES presses each, BUDGET_MS in all. Traffic to 127.0.0.1 only. Prints one JSON line last.
 *
 *   npm run bench:operator      (RABBITMQ_URL to use a given broker; else a temporary local vhost)
 */
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createAmqpBus } from '@screenfleet/bus';
import { topology, type ListElementsResponse } from '@screenfleet/contracts';
import {
  createGateway,
  createGatewayMetrics,
  createTokenRegistry,
  type Gateway,
} from '@screenfleet/gateway';
import { createLinuxDesktop, type Desktop } from '@screenfleet/operator-agent';
import { createLogger, createMetrics, waitFor } from '@screenfleet/runtime';
import {
  freeDisplayNumber,
  startDesktopHarness,
  type DesktopHarness,
} from '../services/operator-agent/test/support/desktop-harness';
import { LARGE_PAGE, type PageElement } from '../services/operator-agent/test/support/test-page';
import { rabbitmqctl } from '../test/services/rabbitmqctl';
import { startService, type ServiceProcess } from '../test/support/processes';
import { percentiles } from './stats';

const PRESSES = 100;
const LISTINGS = 100;
const BUDGET_MS = 150_000;
/** Where in the listing the pressed element sits: deep, as in a long real page. */
const TARGET_INDEX = 450;
const TARGETS = {
  list_p95_ms: 50,
  press_p95_ms: 30,
  list_after_change_p95_ms: 30,
  click_p95_ms: 30,
};
/** How long the agent's CPU is watched on the idle desktop (the aim: at most 5% of a core). */
const IDLE_MS = 10_000;
/**
 * Presses measured with a pause before each, and the pause (beyond the agent's wait; also
 * before each spaced typing).
 */
const SPACED_PRESSES = 50;
const PRESS_PAUSE_MS = 50;
/** Clicks and typings measured, each way. */
const CLICKS = 50;
const TYPINGS = 50;
/** What each typing types: 20 characters, some the keymap lacks (lent keys). */
const TYPED = 'Zoë Saldaña, 東京 #42!';
/** The typing aim: 30 ms plus 2 ms a character. */
const TYPE_TARGET_MS = 30 + 2 * Array.from(TYPED).length;
/** Listings after a change of the page: each removes one of the page's last elements. */
const CHANGES = 20;
/** Listings and presses run first and not measured: the agent's code is compiled by then. */
const WARM_UP = 5;
const TOKEN = 'bench-operator-token-0001';
const DEVICE = `bench-desk-${process.pid}`;
const KEYS = 'abcdefghijklmnopqrstuvwxyz'.split('');

const log = (line: string) => process.stderr.write(`${line}\n`);
const now = () => performance.timeOrigin + performance.now();
const stats = (samples: number[]) => {
  const { p50, p95 } = percentiles(samples, [50, 95]);
  return { p50: p50 ?? NaN, p95: p95 ?? NaN };
};

async function brokerUrl(): Promise<{ url: string; remove(): Promise<void> }> {
  if (process.env.RABBITMQ_URL) return { url: process.env.RABBITMQ_URL, remove: async () => {} };
  const vhost = `sf-bench-operator-${process.pid}`;
  await rabbitmqctl(['add_vhost', vhost]);
  await rabbitmqctl(['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*']);
  return {
    url: `amqp://guest:guest@127.0.0.1:5672/${vhost}`,
    remove: async () => {
      await rabbitmqctl(['delete_vhost', vhost]);
    },
  };
}

/**
 * Runs `action` up to `count` times (not past the deadline) and returns each duration: the
 * action's own when it returns one (a part of it measured), else the whole call's.
 */
async function timed(count: number, deadline: number, action: () => Promise<unknown>) {
  const samples: number[] = [];
  for (let i = 0; i < count && Date.now() < deadline; i++) {
    const started = now();
    const measured = await action();
    samples.push(typeof measured === 'number' ? measured : now() - started);
  }
  return samples;
}

async function main(): Promise<void> {
  const deadline = Date.now() + BUDGET_MS;
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const broker = await brokerUrl();
    cleanups.push(() => broker.remove());
    const desk: DesktopHarness = await startDesktopHarness(freeDisplayNumber(130), LARGE_PAGE);
    cleanups.push(() => desk.stop());

    const logger = createLogger({ service: 'gateway', level: 'warn' });
    const keys = generateKeyPairSync('ed25519');
    const bus = await createAmqpBus({
      url: broker.url,
      topology,
      connectionName: 'bench-gateway',
      logger,
      reconnect: { initialMs: 50, maxMs: 1000 },
      publishTimeoutMs: 5000,
    });
    cleanups.push(() => bus.close());
    const gateway: Gateway = createGateway({
      bus,
      auth: {
        tokens: createTokenRegistry([{ id: 'bench', token: TOKEN, scopes: ['operator'] }]),
        allowUnauthenticatedLoopback: false,
      },
      metrics: createGatewayMetrics(createMetrics()),
      logger,
      operator: { signingKey: keys.privateKey },
    });
    const port = await gateway.listen(0, '127.0.0.1');
    cleanups.push(() => gateway.close());
    const base = `http://127.0.0.1:${port}`;

    const agent: ServiceProcess = startService('operator-agent', {
      RABBITMQ_URL: broker.url,
      DEVICE_NAME: DEVICE,
      DISPLAY: desk.env.DISPLAY,
      DBUS_SESSION_BUS_ADDRESS: desk.env.DBUS_SESSION_BUS_ADDRESS,
      OPERATOR_OPS_PORT: '0',
      OPERATOR_COMMAND_PUBLIC_KEY: keys.publicKey
        .export({ type: 'spki', format: 'pem' })
        .toString(),
    });
    cleanups.push(() => agent.stop());
    await agent.waitForLog(/operator agent started/, 20_000);

    const post = async (path: string, body: object) => {
      const response = await fetch(base + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ device_name: DEVICE, ...body }),
      });
      const json = (await response.json()) as Record<string, unknown>;
      if (response.status !== 200)
        throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
      return json;
    };
    const list = () =>
      post('/experimental/operator/list-interactable-elements', {
        app_name: 'Chromium',
      }) as Promise<unknown> as Promise<ListElementsResponse>;

    // Chromium exposes the page shortly after it loaded: wait until all of it is listed.
    const last = desk.pageElements[desk.pageElements.length - 1] as PageElement;
    let listing = await waitFor(
      async () => {
        const answer = await list();
        return answer.elements.some((e) => e.text === last.label) && answer;
      },
      { timeoutMs: Math.max(0, deadline - Date.now()), intervalMs: 100, what: 'the whole page' },
    );
    const target = deepElement(listing, desk.pageElements);

    for (let i = 0; i < WARM_UP; i++) listing = await list();
    const cpu = cpuMeter(agent.child.pid, chromiumPids(desk));
    const agentLogged = agent.lines.length;
    const listMs = await timed(LISTINGS, deadline, async () => {
      listing = await list();
    });
    // The agent's own time per listing (its audit line): what the transport adds is the rest.
    const listAgentMs = agent.lines
      .slice(agentLogged)
      .filter((line) => line.audit === 'operator' && line.action === 'list')
      .map((line) => Number(line.durationMs));
    const listCpu = cpu.perCall(listMs.length);
    const elementCount = listing.elements.length;

    // The page changes (an element goes), then the first listing that shows it: the agent
    // reads the whole tree again, the cost of listing a UI that changed since the last time.
    const changedMs: number[] = [];
    for (const gone of desk.pageElements.slice(desk.pageElements.length - CHANGES)) {
      if (Date.now() > deadline) break;
      await desk.removeElement(gone.id);
      for (;;) {
        const started = now();
        listing = await list();
        const took = now() - started;
        if (!listing.elements.some((e) => e.text === gone.label)) {
          changedMs.push(took);
          break;
        }
        if (Date.now() > deadline) throw new Error(`#${gone.id} stayed listed`);
      }
    }
    cpu.perCall(0);

    // The presses below address the newest listing: the target must still be where it was
    // (the elements removed above come after it).
    const listed = listing.elements[target.index];
    if (listed?.text !== target.element.label) throw new Error('the target moved in the listing');

    let lastSeq = Math.max(0, ...desk.keydowns().map((r) => r.seq));
    const measure = async (
      press: (key: string) => Promise<unknown>,
      samples: number[],
      { count = PRESSES, pauseMs = 0 } = {},
    ) => {
      for (let i = 0; i < count + WARM_UP && Date.now() < deadline; i++) {
        const key = KEYS[i % KEYS.length] as string;
        const code = `Key${key.toUpperCase()}`;
        const after = lastSeq;
        if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        const started = now();
        await press(key);
        const report = await desk.waitForKeydown((r) => r.code === code && r.seq > after, 5000);
        lastSeq = report.seq;
        if (report.activeId !== target.element.id) {
          throw new Error(
            `the key went to #${report.activeId || '(body)'}, not #${target.element.id}`,
          );
        }
        if (i >= WARM_UP) samples.push(report.at - started);
      }
    };

    const e2eMs: number[] = [];
    await measure(
      (key) =>
        post('/experimental/operator/press-key-by-index', {
          element_index: target.index,
          key,
        }),
      e2eMs,
    );
    const pressCpu = cpu.perCall(e2eMs.length + WARM_UP);
    // The same presses with a pause before each: a press that does not come right after the
    // previous key waits for nothing (the agent's wait after a key, README "Keys and the next
    // focus"), as when a client decides between presses.
    const spacedMs: number[] = [];
    await measure(
      (key) =>
        post('/experimental/operator/press-key-by-index', {
          element_index: target.index,
          key,
        }),
      spacedMs,
      { count: SPACED_PRESSES, pauseMs: PRESS_PAUSE_MS },
    );

    // A listing is used for 30 s (the snapshot's TTL; the presses above once outlasted it on a
    // busy machine): the clicks and the typings each start from a fresh one, listed unmeasured.
    const relist = async (...at: Array<{ index: number; element: PageElement }>) => {
      listing = await list();
      for (const { index, element } of at) {
        if (listing.elements[index]?.text !== element.label)
          throw new Error(`#${element.id} moved`);
      }
      cpu.perCall(0);
    };

    // Clicks on a button near the target, then typing into the target input, end to end.
    const button = deepElement(listing, desk.pageElements, 'push button');
    await relist(button);
    const clickE2eMs = await timed(CLICKS, deadline, () =>
      post('/experimental/operator/click-by-index', { element_index: button.index }),
    );
    const clickCpu = cpu.perCall(clickE2eMs.length);
    await waitFor(
      () => desk.clicks().filter((id) => id === button.element.id).length >= clickE2eMs.length,
      {
        timeoutMs: 5000,
        what: `${clickE2eMs.length} clicks on #${button.element.id}`,
      },
    );
    await relist(target);
    const type = () =>
      post('/experimental/operator/type-by-index', { element_index: target.index, text: TYPED });
    const typeE2eMs = await timed(TYPINGS, deadline, type);
    const typeCpu = cpu.perCall(typeE2eMs.length);
    // The same with a pause before each: a typing right after the previous one waits for the
    // rest of the agent's 25 ms after that text showed, one that does not, for nothing.
    await relist(target);
    const spacedTypeMs = await timed(TYPINGS, deadline, async () => {
      await new Promise((resolve) => setTimeout(resolve, PRESS_PAUSE_MS));
      const started = now();
      await type();
      return now() - started;
    });

    // The agent on an idle desktop, right after an operator was at work: its share of one core.
    const idleFrom = { cpu: cpuTimeMs(agent.child.pid), at: now() };
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idleCpuPercent =
      Math.round(((cpuTimeMs(agent.child.pid) - idleFrom.cpu) / (now() - idleFrom.at)) * 1000) / 10;

    const desktop: Desktop = await createLinuxDesktop({ env: desk.env });
    cleanups.push(() => desktop.close());
    let elements = await desktop.listElements({ appName: 'Chromium' });
    for (let i = 0; i < WARM_UP; i++)
      elements = await desktop.listElements({ appName: 'Chromium' });
    const desktopListMs = await timed(LISTINGS, deadline, async () => {
      elements = await desktop.listElements({ appName: 'Chromium' });
    });
    const element = elements[target.index];
    if (element?.name !== target.element.label) {
      throw new Error(`no "${target.element.label}" at index ${target.index} for the baseline`);
    }
    const desktopMs: number[] = [];
    await measure(async (key) => {
      await desktop.describe(element);
      await desktop.focus(element);
      await desktop.pressKey(key as 'a', []);
    }, desktopMs);
    const buttonElement = elements[button.index] as (typeof elements)[number];
    const clickDesktopMs = await timed(CLICKS, deadline, async () => {
      await desktop.describe(buttonElement);
      await desktop.click(buttonElement);
    });
    const typeDesktopMs = await timed(TYPINGS, deadline, async () => {
      await desktop.describe(element);
      await desktop.typeText(element, TYPED);
    });

    const e2e = stats(e2eMs);
    const direct = stats(desktopMs);
    const listE2e = stats(listMs);
    const result = {
      bench: 'operator',
      elements: elementCount,
      target_index: target.index,
      listings: listMs.length,
      list_ms: listE2e,
      list_agent_ms: stats(listAgentMs),
      list_desktop_ms: stats(desktopListMs),
      list_after_change_ms: stats(changedMs),
      listings_after_change: changedMs.length,
      cpu_ms_per_listing: listCpu,
      presses: e2eMs.length,
      e2e_ms: e2e,
      spaced_presses: spacedMs.length,
      spaced_press_ms: stats(spacedMs),
      baseline_presses: desktopMs.length,
      desktop_ms: direct,
      cpu_ms_per_press: pressCpu,
      ratio_p50: Math.round((e2e.p50 / direct.p50) * 100) / 100,
      idle_agent_cpu_percent: idleCpuPercent,
      clicks: clickE2eMs.length,
      click_ms: stats(clickE2eMs),
      click_desktop_ms: stats(clickDesktopMs),
      cpu_ms_per_click: clickCpu,
      typings: typeE2eMs.length,
      typed_characters: Array.from(TYPED).length,
      type_ms: stats(typeE2eMs),
      spaced_type_ms: stats(spacedTypeMs),
      type_desktop_ms: stats(typeDesktopMs),
      cpu_ms_per_typing: typeCpu,
      targets: { ...TARGETS, type_p95_ms: TYPE_TARGET_MS },
      within_target:
        listE2e.p95 <= TARGETS.list_p95_ms &&
        e2e.p95 <= TARGETS.press_p95_ms &&
        stats(changedMs).p95 <= TARGETS.list_after_change_p95_ms &&
        stats(clickE2eMs).p95 <= TARGETS.click_p95_ms &&
        stats(typeE2eMs).p95 <= TYPE_TARGET_MS &&
        idleCpuPercent <= 5,
    };
    await runCleanups(cleanups);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    await runCleanups(cleanups);
    throw error;
  }
}

/** CPU time (ms) a process has used: utime + stime from /proc (clock ticks of 10 ms). */
function cpuTimeMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/**
 * The harness's Chromium processes, found by its profile dir: the browser process (where AT-SPI
 * is answered) and its renderers (where the page runs: most of what a typed key costs).
 */
function chromiumPids(desk: DesktopHarness): { browser?: number; renderers: number[] } {
  const profile = join(dirname(desk.childEnv.HOME ?? ''), 'chromium-profile');
  const found: { browser?: number; renderers: number[] } = { renderers: [] };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.includes(profile)) continue;
      if (!cmdline.includes('--type=')) found.browser = Number(entry);
      else if (cmdline.includes('--type=renderer')) found.renderers.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

/**
 * CPU used per call since the previous reading, by the agent, Chromium's browser process, its
 * renderers and this process (the gateway and the bench itself): a figure the machine's other
 * load does not move much.
 */
function cpuMeter(
  agentPid: number | undefined,
  chromium: { browser?: number; renderers: number[] },
) {
  const read = () => {
    const own = process.cpuUsage();
    return {
      agent: cpuTimeMs(agentPid),
      chromium: cpuTimeMs(chromium.browser),
      renderer: chromium.renderers.reduce((sum, pid) => sum + cpuTimeMs(pid), 0),
      gateway_and_bench: (own.user + own.system) / 1000,
    };
  };
  let last = read();
  return {
    perCall(calls: number) {
      const current = read();
      const per = (key: keyof typeof current) =>
        Math.round(((current[key] - last[key]) / calls) * 10) / 10;
      const result = {
        agent: per('agent'),
        chromium: per('chromium'),
        renderer: per('renderer'),
        gateway_and_bench: per('gateway_and_bench'),
      };
      last = current;
      return result;
    },
  };
}

/** The page's element of a role listed nearest TARGET_INDEX (an input: where typing keys makes sense). */
function deepElement(
  listing: ListElementsResponse,
  page: readonly PageElement[],
  role: PageElement['role'] = 'entry',
) {
  const inputs = new Map(page.filter((e) => e.role === role).map((e) => [e.label, e]));
  let best: { index: number; element: PageElement } | undefined;
  for (const listed of listing.elements) {
    const element = inputs.get(listed.text);
    if (!element || listed.role !== element.role) continue;
    if (!best || Math.abs(listed.index - TARGET_INDEX) < Math.abs(best.index - TARGET_INDEX)) {
      best = { index: listed.index, element };
    }
  }
  if (!best) throw new Error('no input of the page was listed');
  return best;
}

async function runCleanups(cleanups: Array<() => Promise<unknown>>): Promise<void> {
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop() as () => Promise<unknown>;
    await cleanup().catch((error: unknown) => log(`cleanup failed: ${String(error)}`));
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`bench:operator failed: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);

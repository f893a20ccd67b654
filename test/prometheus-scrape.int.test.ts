/**
 * A real Prometheus (Debian package `prometheus`, scripts/ensure-machine.sh) scrapes the
 * distributed services as processes: gateway, ingest worker, archive worker and an operator agent
 * (no DISPLAY: its desktop is unavailable, it still announces itself and exports metrics). After
 * a bounded burst of traffic the test asks Prometheus's HTTP API that every target is up and that
 * the key series exist and move, runs `promtool check metrics` on each service's /metrics text,
 * and evaluates every expression of ops/grafana/screenfleet.json, so the dashboard cannot name a
 * series that does not exist. Prometheus also loads ops/prometheus/alerts.yml: every rule must
 * evaluate without error against the real series.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../bin/ports';
import { waitUntil } from '../services/archive-worker/test/support';
import { buildBatch, buildItem } from './support/content';
import { operatorKeys, operatorPublicKeyPem, post, tokens } from './support/gateway';
import { startService, type ServiceProcess } from './support/processes';
import { databaseName, isolatedBroker, mongoUrl } from './services';

const root = path.join(__dirname, '..');
const DAY_MS = 86_400_000;
const DEVICE = 'scrape-desk';
const STALL_AFTER_MS = 3000;
/** Grafana's variables as the dashboard's queries use them, with the values the test gives. */
const GRAFANA_VARIABLES: Record<string, string> = {
  $__rate_interval: '1m',
  $__interval: '15s',
  $__range: '1m',
};

interface PromResponse<T> {
  status: 'success' | 'error';
  data: T;
  errorType?: string;
  error?: string;
}
interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}
interface Target {
  labels: Record<string, string>;
  health: string;
  lastError: string;
}
interface RuleGroup {
  name: string;
  rules: Array<{ name: string; health: string; lastError?: string }>;
}

interface DashboardTarget {
  panel: string;
  refId: string;
  expr: string;
}

/** Every panel target of the dashboard (rows' nested panels included), variables substituted. */
function dashboardTargets(): DashboardTarget[] {
  interface Panel {
    title: string;
    type: string;
    panels?: Panel[];
    targets?: Array<{ refId: string; expr: string }>;
  }
  const dashboard = JSON.parse(
    readFileSync(path.join(root, 'ops', 'grafana', 'screenfleet.json'), 'utf8'),
  ) as { panels: Panel[] };
  const flat = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  return flat.flatMap((panel) =>
    (panel.targets ?? []).map(({ refId, expr }) => ({
      panel: panel.title,
      refId,
      expr: expr.replace(/\$\{?(__\w+)\}?/g, (variable, name: string) => {
        const value = GRAFANA_VARIABLES[`$${name}`];
        if (value === undefined) throw new Error(`unknown Grafana variable ${variable} in ${expr}`);
        return value;
      }),
    })),
  );
}

/**
 * What `promtool check metrics` says about prom-client's default Node.js gauges, not about ours:
 * prom-client names three gauges `_total` (prometheus/client_js#283, open). Any other line fails.
 */
const PROM_CLIENT_LINT = new Set(
  ['handles', 'requests', 'resources'].map(
    (what) => `nodejs_active_${what}_total non-counter metrics should not have "_total" suffix`,
  ),
);

/** `promtool check metrics` on a /metrics text (stdin): its exit code and its other lines. */
function checkMetrics(text: string): Promise<{ code: number | string | null; problems: string[] }> {
  return new Promise((resolve) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error) => resolve({ code: error.message, problems: [] }));
    child.once('close', (code) => {
      const lines = output.split('\n').filter((line) => line.trim() !== '');
      resolve({ code, problems: lines.filter((line) => !PROM_CLIENT_LINT.has(line.trim())) });
    });
    child.stdin.end(text);
  });
}

describe('Prometheus scraping the distributed services', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'sf-prometheus-'));
  const services: Array<{ job: string; child: ServiceProcess; opsPort: number }> = [];
  let removeBroker: (() => Promise<void>) | undefined;
  let prometheus: ChildProcess | undefined;
  let prometheusExited: Promise<unknown> | undefined;
  let prometheusLog = '';
  let promUrl = '';
  let apiUrl = '';

  async function api<T>(pathAndQuery: string): Promise<PromResponse<T>> {
    const response = await fetch(promUrl + pathAndQuery);
    return (await response.json()) as PromResponse<T>;
  }
  const query = (expr: string) =>
    api<{ resultType: string; result: Sample[] }>(
      `/api/v1/query?query=${encodeURIComponent(expr)}`,
    );
  /** The single value of an expression (NaN when it has none). */
  const value = async (expr: string): Promise<number> => {
    const [sample] = (await query(expr)).data?.result ?? [];
    return sample ? Number(sample.value[1]) : NaN;
  };
  /** Polls Prometheus until the expression's value passes; returns the last value. */
  const waitForValue = (expr: string, done: (v: number) => boolean, timeoutMs = 30_000) =>
    waitUntil(() => value(expr), done, timeoutMs);

  async function start(job: string, env: Record<string, string>, ready: RegExp) {
    const child = startService(job, env);
    const entry = { job, child, opsPort: 0 };
    services.push(entry); // stopped in afterAll even when it never gets ready
    const listening = child.waitForLog(/ops server listening/, 30_000);
    await child.waitForLog(ready, 30_000);
    entry.opsPort = Number((await listening).port);
    return child;
  }

  beforeAll(async () => {
    const broker = await isolatedBroker();
    removeBroker = () => broker.remove();
    const shared = {
      RABBITMQ_URL: broker.url,
      MONGODB_URL: mongoUrl(),
      MONGODB_DATABASE: databaseName('scrape'),
      DATA_DIR: tmp,
      LOG_LEVEL: 'info',
      GATEWAY_OPS_PORT: '0',
      INGEST_OPS_PORT: '0',
      ARCHIVE_OPS_PORT: '0',
      OPERATOR_OPS_PORT: '0',
      // Short, so the device that stops sending turns stalled (and its alert fires) in seconds.
      CAPTURE_STALL_AFTER: `${STALL_AFTER_MS}ms`,
    };
    await start('ingest-worker', shared, /consuming content batches/);
    await start(
      'archive-worker',
      {
        ...shared,
        ARCHIVE_DIR: path.join(tmp, 'archive'),
        ARCHIVE_ENABLED: 'true',
        ARCHIVE_RETENTION_DAYS: '7',
        ARCHIVE_CHUNK_SIZE: '2',
        ARCHIVE_INTERVAL: '1s',
      },
      /archive worker started/,
    );
    await start(
      'operator-agent',
      { ...shared, DEVICE_NAME: DEVICE, OPERATOR_COMMAND_PUBLIC_KEY: operatorPublicKeyPem },
      /operator agent started/,
    );
    const gateway = await start(
      'gateway',
      {
        ...shared,
        GATEWAY_PORT: '0',
        GATEWAY_TOKENS: JSON.stringify(Object.values(tokens)),
        GATEWAY_OPERATOR_TIMEOUT: '1s',
        GATEWAY_OPERATOR_SIGNING_KEY: operatorKeys.privateKey
          .export({ type: 'pkcs8', format: 'pem' })
          .toString(),
      },
      /gateway listening/,
    );
    apiUrl = `http://127.0.0.1:${Number((await gateway.waitForLog(/gateway listening/)).port)}`;

    // JSON is YAML: the scrape config of ops/prometheus/prometheus.yml with this run's ports.
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [path.join(root, 'ops', 'prometheus', 'alerts.yml')],
      scrape_configs: services.map(({ job, opsPort }) => ({
        job_name: job,
        static_configs: [{ targets: [`127.0.0.1:${opsPort}`] }],
      })),
    };
    const configFile = path.join(tmp, 'prometheus.yml');
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${path.join(tmp, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    prometheusExited = new Promise((resolve) => prometheus!.once('exit', resolve));
    prometheus.stderr?.on('data', (chunk: Buffer) => {
      prometheusLog = (prometheusLog + chunk.toString()).slice(-4000);
    });
    prometheus.once('error', (error) => (prometheusLog += `\n${error.message}`));

    // Every target scraped once before the traffic, so the counters are seen moving from 0.
    const targetsUp = await waitUntil(
      () =>
        api<{ activeTargets: Target[] }>('/api/v1/targets')
          .then((r) => r.data.activeTargets.filter((t) => t.health === 'up').length)
          .catch(() => 0),
      (up) => up === services.length,
    );
    if (targetsUp !== services.length)
      throw new Error(`Prometheus did not scrape every service:\n${prometheusLog}`);

    // Traffic: 10 batches of 3 items (2 of them 40 days old, for the archive), a bad request,
    // the archive status, a listing the agent answers (503: its desktop is unavailable) and a
    // press on a device with no agent (404: the gateway sees no heartbeat of it).
    const old = (i: number) => new Date(Date.now() - 40 * DAY_MS + i * 1000).toISOString();
    for (let i = 0; i < 10; i++) {
      const batch =
        i < 2
          ? {
              device_name: DEVICE,
              content: {
                content_type: 'frames',
                data: [0, 1, 2].map((k) => buildItem(i * 3 + k, { timestamp: old(i * 3 + k) })),
              },
            }
          : buildBatch(DEVICE, i * 3, 3);
      expect((await post(`${apiUrl}/add`, batch)).status).toBe(200);
    }
    expect((await post(`${apiUrl}/add`, { device_name: DEVICE })).status).toBe(400);
    const status = await fetch(`${apiUrl}/archive/status`, {
      headers: { authorization: `Bearer ${tokens.all.token}` },
    });
    expect(status.status).toBe(200);
    const list = await post(`${apiUrl}/experimental/operator/list-interactable-elements`, {
      app_name: 'Chromium',
      device_name: DEVICE,
    });
    expect(list.status).toBe(503);
    const press = await post(`${apiUrl}/experimental/operator/press-key-by-index`, {
      element_index: 0,
      key: 'a',
      device_name: 'scrape-no-agent',
    });
    expect(press.status).toBe(404);

    // Scraped after the traffic, and the archive passes done with the old items.
    const written = await waitForValue('sum(ingest_items_written_total)', (v) => v >= 30);
    const archived = await waitForValue('sum(archive_items_archived_total)', (v) => v >= 6);
    const settled = await waitForValue(
      'count(sum by (action, result) (gateway_operator_commands_total{result!="success"}) > 0)',
      (v) => v >= 2,
    );
    if (!(written >= 30 && archived >= 6 && settled >= 2))
      throw new Error(
        `traffic not seen: written ${written}, archived ${archived}, press ${settled}`,
      );
    // Two more scrapes, so every rate() window holds the moved values twice.
    const at = Date.now();
    await waitUntil(
      () => value('max(timestamp(up))'),
      (t) => t * 1000 > at + 2000,
    );
  }, 120_000);

  afterAll(async () => {
    if (prometheus?.exitCode === null && prometheus.signalCode === null) prometheus.kill('SIGTERM');
    await prometheusExited;
    for (const { child } of services.reverse()) await child.stop();
    await removeBroker?.();
    rmSync(tmp, { recursive: true, force: true });
  }, 60_000);

  it('when Prometheus scrapes the services, then every target is up', async () => {
    const { data } = await api<{ activeTargets: Target[] }>('/api/v1/targets');
    const targets = data.activeTargets.map((t) => ({ job: t.labels.job, health: t.health }));
    expect(targets.sort((a, b) => String(a.job).localeCompare(String(b.job)))).toEqual([
      { job: 'archive-worker', health: 'up' },
      { job: 'gateway', health: 'up' },
      { job: 'ingest-worker', health: 'up' },
      { job: 'operator-agent', health: 'up' },
    ]);
  });

  it.each([
    ['items accepted', 'sum(increase(gateway_items_accepted_total[1m]))'],
    ['items written', 'sum(increase(ingest_items_written_total[1m]))'],
    ['publish latency', 'sum(increase(gateway_publish_duration_seconds_count[1m]))'],
    ['write latency', 'sum(increase(ingest_write_duration_seconds_count[1m]))'],
    ['archive chunks', 'sum(increase(archive_chunks_uploaded_total[1m]))'],
    ['archive storage used', 'max(archive_storage_used_bytes)'],
    ['archive watermark', 'max(archive_watermark_timestamp_seconds)'],
    ['archive passes done', 'sum(increase(archive_passes_total{outcome="done"}[1m]))'],
    // Labelled by route, status or result: a series appears with its first event, so the value
    // (the processes are fresh and were scraped before the traffic), not increase().
    ['HTTP requests', 'sum(gateway_http_requests_total)'],
    ['operator commands by result', 'sum(gateway_operator_commands_total)'],
    ['agent commands by result', 'sum(operator_agent_commands_total)'],
    ['operator command latency', 'sum(gateway_operator_command_duration_seconds_count)'],
    ['operator agents connected', 'max(gateway_operator_agents_connected)'],
  ])('when traffic was sent, then %s moved (%s > 0)', async (_, expr) => {
    expect(await value(expr)).toBeGreaterThan(0);
  });

  it.each([
    ['dead letters counter', 'ingest_messages_total{outcome="dead"}', 0],
    ['dead-letter queue depth', 'ingest_queue_messages{queue="ingest.content.dead"}', 0],
    ['archive enabled', 'archive_enabled', 1],
    ['archive last_error', 'archive_last_error_present', 0],
    ['archive pending items', 'archive_pending_items', 0],
    ['archive failed passes', 'archive_passes_total{outcome="failed"}', 0],
    ['operator agents connected', 'gateway_operator_agents_connected', 1],
  ])('when traffic was sent, then the %s series exists with %s = %d', async (_, expr, expected) => {
    const { data } = await query(expr);
    expect(data.result.map((s) => Number(s.value[1]))).toEqual([expected]);
  });

  it('when the agent answered a listing and a press found no agent, then both are counted by result', async () => {
    const { data } = await query(
      'sum by (action, result) (gateway_operator_commands_total{result!="success"})',
    );
    const results = data.result.map((s) => `${s.metric.action} ${s.metric.result} ${s.value[1]}`);
    expect(results.sort()).toEqual(['list desktop_unavailable 1', 'press device_unavailable 1']);
    const agent = await query('sum by (action, result) (operator_agent_commands_total)');
    expect(
      agent.data.result.map((s) => `${s.metric.action} ${s.metric.result} ${s.value[1]}`),
    ).toEqual(['list desktop_unavailable 1']);
  });

  it('when Prometheus evaluates the alert rules against the real series, then none errs and none is pending or firing', async () => {
    const { data } = await api<{ groups: RuleGroup[] }>('/api/v1/rules');
    const rules = data.groups.flatMap((g) => g.rules);
    expect(rules.length).toBeGreaterThan(0);
    expect(rules.filter((r) => r.health !== 'ok')).toEqual([]);
    const alerts = await api<{ alerts: Array<{ labels: Record<string, string>; state: string }> }>(
      '/api/v1/alerts',
    );
    // Every rule has a `for:` longer than this run: a rule that wrongly matches is only pending.
    // Bar DeviceCaptureStalled, whose wait is CAPTURE_STALL_AFTER (3 s here): the test device
    // stopped sending after its traffic, so it may fire already (its own test below).
    expect(
      alerts.data.alerts.filter(
        (a) => a.state !== 'inactive' && a.labels.alertname !== 'DeviceCaptureStalled',
      ),
    ).toEqual([]);
  });

  it('when promtool checks each service /metrics text, then it passes', async () => {
    const checked = [];
    for (const { job, opsPort } of services) {
      const text = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
      const { code, problems } = await checkMetrics(text);
      // 3: lint problems only, and all of them prom-client's known ones.
      checked.push({ job, passed: code === 0 || (code === 3 && problems.length === 0), problems });
    }
    expect(checked).toEqual(services.map(({ job }) => ({ job, passed: true, problems: [] })));
  });

  const targets = dashboardTargets();
  it('when the dashboard is read, then it has panels with targets on the datasource variable', () => {
    expect(targets.length).toBeGreaterThan(10);
    const dashboard = readFileSync(path.join(root, 'ops', 'grafana', 'screenfleet.json'), 'utf8');
    expect(dashboard).not.toMatch(/"uid":\s*"(?!\$\{datasource\}|screenfleet")/);
  });

  it.each(targets.map((t) => [t.panel, t.refId, t.expr]))(
    'when the dashboard panel "%s" (%s) is evaluated, then it parses and returns data',
    async (_, __, expr) => {
      const { status, error, data } = await query(expr);
      // One object, so a failure shows the expression and Prometheus's error together.
      expect({ expr, status, error, hasData: (data?.result.length ?? 0) > 0 }).toEqual({
        expr,
        status: 'success',
        error: undefined,
        hasData: true,
      });
    },
  );

  it('when a device stops sending, then GET /devices shows it stalled and DeviceCaptureStalled fires for it', async () => {
    // The traffic's batches came at ten moments, then nothing: stalled after CAPTURE_STALL_AFTER.
    const stalled = await waitUntil(
      async () => {
        const response = await fetch(`${apiUrl}/devices/${DEVICE}`, {
          headers: { authorization: `Bearer ${tokens.all.token}` },
        });
        return ((await response.json()) as { capture_status?: string }).capture_status;
      },
      (status) => status === 'stalled',
    );
    expect(stalled).toBe('stalled');
    // Its newest item: the traffic's last batch, buildItem(29).
    expect(await value(`max(ingest_device_last_item_timestamp_seconds{device="${DEVICE}"})`)).toBe(
      Date.parse(buildItem(29).timestamp) / 1000,
    );
    const firing = await waitForValue(
      `count(ALERTS{alertname="DeviceCaptureStalled", alertstate="firing", device="${DEVICE}"})`,
      (v) => v === 1,
    );
    expect(firing).toBe(1);
  });
});

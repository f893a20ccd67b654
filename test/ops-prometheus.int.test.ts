/**
 * ops/prometheus: promtool accepts the scrape config and the alert rules, the alerts' unit tests
 * pass, and every series an alert names is one a service really exports, read from the
 * /metrics text of each service's registry as its main.ts builds it (the services are created,
 * not started: no broker, no store). promtool comes with the Debian package `prometheus`
 * (scripts/ensure-machine.sh).
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createArchiveWorker, type ArchiveWorkerDeps } from '@screenfleet/archive-worker';
import { createGatewayMetrics } from '@screenfleet/gateway';
import { createIngestWorker } from '@screenfleet/ingest-worker';
import { createOperatorAgent, unavailableDesktop } from '@screenfleet/operator-agent';
import { createLogger, createMetrics, type Registry } from '@screenfleet/runtime';

const root = path.join(__dirname, '..');
const alertsFile = path.join(root, 'ops', 'prometheus', 'alerts.yml');
/** Series Prometheus makes itself for every target, not read from /metrics. */
const SYNTHETIC_SERIES = new Set(['up']);

interface ToolResult {
  command: string;
  code: number | string;
  output: string;
}

/** promtool's exit code and everything it printed, so a failed expectation shows why. */
function promtool(...args: string[]): Promise<ToolResult> {
  const command = `promtool ${args.join(' ')}`;
  return new Promise((resolve) => {
    execFile('promtool', args, { cwd: root }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      if (!error) return resolve({ command, code: 0, output });
      if (error.code === 'ENOENT') {
        const hint =
          'promtool not found: install the Debian package prometheus (ensure-machine.sh)';
        return resolve({ command, code: 'ENOENT', output: hint });
      }
      resolve({ command, code: error.code ?? 'unknown', output: output || error.message });
    });
  });
}

/**
 * The `expr:` of every rule, as written in alerts.yml: a `|` block (the lines indented deeper
 * than `expr:`) or one line. The file says it keeps to these two forms; the count check below
 * fails if it stops doing so.
 */
function ruleExpressions(yaml: string): string[] {
  const lines = yaml.split('\n');
  const expressions: string[] = [];
  lines.forEach((line, i) => {
    const match = /^(\s*)expr:\s*(.*)$/.exec(line);
    if (!match) return;
    const [, indent = '', rest = ''] = match;
    if (!/^[|>][-+]?$/.test(rest)) {
      expressions.push(rest.replace(/^(['"])(.*)\1$/, '$2'));
      return;
    }
    const block: string[] = [];
    for (const next of lines.slice(i + 1)) {
      if (next.trim() !== '' && next.search(/\S/) <= indent.length) break;
      block.push(next);
    }
    expressions.push(block.join('\n'));
  });
  return expressions;
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression selects (not functions, keywords or label names). */
function metricNames(expression: string): string[] {
  const selectors = expression
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '') // strings
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges and subqueries
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ''); // label lists
  const names: string[] = [];
  for (const match of selectors.matchAll(/(?<![\w.:])[a-zA-Z_:][\w:]*(?!\w)(\s*\()?/g)) {
    const [, call] = match;
    const name = match[0].replace(/\s*\($/, '');
    if (call === undefined && !KEYWORDS.has(name.toLowerCase())) names.push(name);
  }
  return names;
}

/** Every series name a /metrics text exposes: each family, with a histogram's three series. */
function exposedSeries(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name = '', type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
  }
  return names;
}

/** A dependency the service's factory must not call: the service is created, never started. */
function unused<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_, property) => () => {
      throw new Error(`${what}.${String(property)} called by a service that was not started`);
    },
  });
}

/** Each service's /metrics text, from a registry built the way its main.ts builds it. */
async function servicesMetrics(): Promise<Record<string, string>> {
  const logger = createLogger({ service: 'ops-prometheus-test', level: 'silent' });
  const registries: Record<string, Registry> = {};
  const registry = (service: string): Registry => (registries[service] = createMetrics());

  createGatewayMetrics(registry('gateway'));
  createIngestWorker({
    bus: {
      consume: unused('bus'),
      serve: unused('bus'),
      publish: unused('bus'),
      queueDepth: () => Promise.resolve(0),
    },
    store: unused('content store'),
    tokenStore: unused('token store'),
    auditStore: unused('audit store'),
    logger,
    registry: registry('ingest-worker'),
    prefetch: 1,
    grouping: { maxWeight: 1, maxWaitMs: 1 },
    retry: { initialMs: 1, maxMs: 1 },
    searchPrefetch: 1,
  });
  const archiveDeps: ArchiveWorkerDeps = {
    bus: unused('bus'),
    content: unused('content store'),
    archive: unused('archive store'),
    state: unused('archive state store'),
    defaults: { enabled: false, retention_days: 30, storage_limit: 1 },
    chunkSize: 1,
    intervalMs: 1,
    leaseTtlMs: 1,
    retry: { initialMs: 1, maxMs: 1 },
    holderId: 'ops-prometheus-test',
    logger,
    registry: registry('archive-worker'),
  };
  createArchiveWorker(archiveDeps);
  createOperatorAgent({
    bus: unused('bus'),
    desktop: unavailableDesktop('not started'),
    deviceName: 'ops-prometheus-test',
    commandKey: generateKeyPairSync('ed25519').publicKey,
    snapshotTtlMs: 1,
    logger,
    registry: registry('operator-agent'),
  });

  const texts: Record<string, string> = {};
  for (const [service, r] of Object.entries(registries)) texts[service] = await r.metrics();
  return texts;
}

describe('ops/prometheus', () => {
  it.each([
    ['the scrape config (and the rule files it names)', 'check', 'config', 'prometheus.yml'],
    ['the alert rules', 'check', 'rules', 'alerts.yml'],
    [
      'the alert unit tests (each alert fires and stays silent)',
      'test',
      'rules',
      'alerts.test.yml',
    ],
  ])('when promtool checks %s, then it passes', async (_, verb, what, file) => {
    const { command, code, output } = await promtool(
      verb,
      what,
      path.join('ops', 'prometheus', file),
    );
    // One string, so a failure prints everything promtool said.
    expect(`${command}: exit ${code}\n${output}`).toMatch(/: exit 0\n/);
  });

  it('when an alert names a series, then a service exports it', async () => {
    const yaml = readFileSync(alertsFile, 'utf8');
    const expressions = ruleExpressions(yaml);
    expect(expressions).toHaveLength([...yaml.matchAll(/^\s*- alert:/gm)].length);

    const texts = await servicesMetrics();
    const exporters = (name: string): string[] =>
      Object.keys(texts).filter((service) => exposedSeries(texts[service] ?? '').has(name));
    const used = [...new Set(expressions.flatMap(metricNames))].sort();
    expect(used.length).toBeGreaterThan(0);
    expressions.forEach((expression) => expect(metricNames(expression)).not.toHaveLength(0));

    const missing = used.filter((name) => !SYNTHETIC_SERIES.has(name) && !exporters(name).length);
    expect({ missing, used }).toEqual({ missing: [], used });
  });
});

import { Writable } from 'node:stream';
import { createLogger } from './logger';
import { createMetrics } from './metrics';
import { startOpsServer, type OpsServer, type Readiness } from './ops-server';

const silent = createLogger({ service: 'test', level: 'silent' });

describe('ops server', () => {
  let server: OpsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(
    readiness?: () => Promise<Readiness> | Readiness,
    extra: { metricsToken?: string; readinessTimeoutMs?: number } = {},
  ): Promise<string> {
    server = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      registry: createMetrics(),
      readiness,
      logger: silent,
      ...extra,
    });
    expect(server.port).toBeGreaterThan(0);
    return `http://127.0.0.1:${server.port}`;
  }

  it('when /metrics is scraped, then it returns prometheus text with default metrics', async () => {
    const base = await start();
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d+/m);
  });

  it('when a metrics token is set, then /metrics needs it and probes stay open', async () => {
    const base = await start(undefined, { metricsToken: 's3cret' });
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const right = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer s3cret' } });
    expect(right.status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('when the process runs, then /healthz answers ok', async () => {
    const base = await start();
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('when a check goes down and up again, then /readyz flips 200 -> 503 -> 200', async () => {
    let broker = 'up';
    const base = await start(() =>
      Promise.resolve({ ready: broker === 'up', checks: { broker, store: 'up' } }),
    );
    expect((await fetch(`${base}/readyz`)).status).toBe(200);

    broker = 'down: connection closed';
    const down = await fetch(`${base}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({
      ready: false,
      checks: { broker: 'down: connection closed', store: 'up' },
    });

    broker = 'up';
    const up = await fetch(`${base}/readyz`);
    expect(up.status).toBe(200);
    expect(await up.json()).toEqual({ ready: true, checks: { broker: 'up', store: 'up' } });
  });

  it('when the readiness check throws or hangs, then /readyz is 503 with the reason', async () => {
    let mode: 'throw' | 'hang' = 'throw';
    const base = await start(
      () => {
        if (mode === 'throw') throw new Error('boom');
        return new Promise<Readiness>(() => undefined);
      },
      { readinessTimeoutMs: 50 },
    );
    const thrown = await fetch(`${base}/readyz`);
    expect(thrown.status).toBe(503);
    expect(await thrown.json()).toEqual({ ready: false, checks: { readiness: 'error: boom' } });

    mode = 'hang';
    const hung = await fetch(`${base}/readyz`);
    expect(hung.status).toBe(503);
    expect(await hung.json()).toEqual({
      ready: false,
      checks: { readiness: 'timeout after 50 ms' },
    });
  });

  it('when the path is unknown, then it answers 404 JSON; a wrong method gets 405', async () => {
    const base = await start();
    const missing = await fetch(`${base}/nope?x=1`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/json');
    expect(await missing.json()).toEqual({ error: 'not found: /nope' });
    expect((await fetch(`${base}/healthz`, { method: 'POST' })).status).toBe(405);
  });

  it('when the port is taken, then start rejects', async () => {
    const base = await start();
    const port = Number(new URL(base).port);
    await expect(
      startOpsServer({ port, host: '127.0.0.1', registry: createMetrics(), logger: silent }),
    ).rejects.toThrow(/EADDRINUSE/);
  });

  it('logs the port it listens on', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    server = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      registry: createMetrics(),
      logger: createLogger({ service: 'svc', level: 'info', destination: sink }),
    });
    const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 'info',
      service: 'svc',
      component: 'ops-server',
      port: server.port,
      msg: 'ops server listening',
    });
  });
});

/**
 * GET /health end to end in both modes: the newest frame and transcription times come from the
 * ingest workers' summary read (devices.request `newest`, one indexed read in the store), the
 * gateway reads it about once a second however many clients poll, and a tokenless /health must
 * name a loopback Host (or one of GATEWAY_HEALTH_ALLOWED_HOSTS). The summary's rules are the
 * storage contract suite's and src/domain/health-summary.test.ts's; this is the route over the
 * real bus, workers and stores.
 */
import http from 'node:http';
import type { HealthAnswer } from '@screenfleet/contracts';
import { waitUntil } from '../services/archive-worker/test/support';
import { get, post, tokens } from './support/gateway';
import { modes, startSystem, type RunningSystem } from './support/system';

const ALLOWED_HOST = 'fleet-health.test';

/** GET /health over node:http with these headers (fetch would not send a foreign Host). */
function health(
  system: RunningSystem,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${system.url}/health`, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>,
          }),
        );
      })
      .on('error', reject);
  });
}

/** The gateway's ops server, from what it logged at start (embedded: the launcher's line). */
function opsUrl(system: RunningSystem): string {
  for (const line of system.gatewayLog().split('\n')) {
    const announced = /metrics on http:\/\/[^:]+:(\d+)/.exec(line)?.[1];
    if (announced) return `http://127.0.0.1:${announced}`;
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { msg?: string; opsPort?: number };
    if (entry.msg === 'gateway listening') return `http://127.0.0.1:${entry.opsPort}`;
  }
  throw new Error(`no ops port in the gateway's log:\n${system.gatewayLog().slice(-2000)}`);
}

/** Device-counter reads this gateway asked of the ingest workers so far (every result). */
async function summaryReads(ops: string): Promise<number> {
  const text = await (await fetch(`${ops}/metrics`)).text();
  return [...text.matchAll(/^gateway_devices_rpc_total\{[^}]*\} (\d+)$/gm)].reduce(
    (sum, [, n]) => sum + Number(n),
    0,
  );
}

describe.each(modes)('GET /health in %s mode', (mode) => {
  let system: RunningSystem;
  let ops: string;
  const desk = (name: string) => `${mode}-health-${name}`;
  const boundToken = `token-health-bound-${mode}-01`;
  // Whole milliseconds in the past: what the store keeps and /health gives back.
  const at = Date.now() - 60_000;
  const iso = (offsetS: number) => new Date(at + offsetS * 1000).toISOString();

  beforeAll(async () => {
    system = await startSystem(mode, {
      env: {
        GATEWAY_HEALTH_ALLOWED_HOSTS: ALLOWED_HOST,
        GATEWAY_TOKENS: JSON.stringify([
          ...Object.values(tokens),
          { id: 'health-bound', token: boundToken, scopes: ['search'], devices: [desk('a')] },
        ]),
      },
    });
    ops = opsUrl(system);
    const frames = (device: string, offsets: number[]) => ({
      device_name: device,
      content: {
        content_type: 'frames',
        data: offsets.map((s) => ({
          file_path: `/captures/${device}/${s}.mp4`,
          timestamp: iso(s),
          ocr_results: [{ text: `health check frame ${s}` }],
        })),
      },
    });
    for (const batch of [
      frames(desk('a'), [0, 10]),
      {
        device_name: desk('a'),
        content: {
          content_type: 'transcription',
          data: { transcription: 'health check words', timestamp: iso(5) },
        },
      },
      frames(desk('b'), [20]),
    ]) {
      expect((await post(`${system.url}/add`, batch)).status).toBe(200);
    }
  }, 180_000);

  afterAll(async () => {
    await system?.stop();
  });

  it('when devices sent frames and transcriptions, then /health gives the newest of each over the fleet, or over a bound token devices', async () => {
    // Distributed: stored once the worker took the batches; either way the summary may be up to
    // a second old.
    const fleet = await waitUntil(
      () => health(system),
      (r) => r.body.last_frame_timestamp === iso(20),
    );
    expect(fleet.status).toBe(200);
    expect(fleet.body).toMatchObject({
      status: 'healthy',
      last_frame_timestamp: iso(20),
      last_audio_timestamp: iso(5),
      frame_status: 'ok',
      audio_status: 'ok',
    } satisfies Partial<HealthAnswer>);

    const bound = await waitUntil(
      () => health(system, { authorization: `Bearer ${boundToken}` }),
      (r) => r.body.last_frame_timestamp === iso(10),
    );
    expect(bound.body).toMatchObject({
      last_frame_timestamp: iso(10),
      last_audio_timestamp: iso(5),
    });
  });

  it('when a request without a token names a foreign Host, then 403 with the error body; a loopback or allowed Host is served; a token is not Host-checked', async () => {
    const port = new URL(system.url).port;
    const foreign = await health(system, { host: `rebound.example:${port}` });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({
      success: false,
      errors: [expect.objectContaining({ path: 'headers.host' })],
    });

    const served: Array<Record<string, string>> = [
      { host: `127.0.0.1:${port}` },
      { host: `localhost:${port}` },
      { host: `${ALLOWED_HOST}:${port}` },
      { host: `rebound.example:${port}`, authorization: `Bearer ${tokens.all.token}` },
    ];
    for (const headers of served) {
      const served = await health(system, headers);
      expect([served.status, served.body.status]).toEqual([200, 'healthy']);
    }
  });

  it('when 16 clients poll /health without pause, then the workers are asked about once a second, and a search is answered meanwhile', async () => {
    const CALLERS = 16;
    const MIN_PER_CALLER = 10;
    const MAX_PER_CALLER = 300;
    const RUN_MS = 3000;
    const before = await summaryReads(ops);
    const started = performance.now();
    let answered = 0;
    const caller = async () => {
      for (let n = 0; n < MAX_PER_CALLER; n++) {
        if (n >= MIN_PER_CALLER && performance.now() - started >= RUN_MS) return;
        const response = await health(system);
        expect(response.status).toBe(200);
        answered += 1;
      }
    };
    const searching = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      return get(`${system.url}/search?q=health&limit=5`);
    })();
    const [search] = await Promise.all([searching, ...Array.from({ length: CALLERS }, caller)]);
    const elapsedS = (performance.now() - started) / 1000;
    const reads = (await summaryReads(ops)) - before;

    expect(search.status).toBe(200);
    expect(answered).toBeGreaterThanOrEqual(CALLERS * MIN_PER_CALLER);
    // Read starts are a second apart at least; one more may have started before the window.
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(Math.floor(elapsedS) + 2);
  });
});

import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createEnvelope,
  toListingRow,
  type DevicesReply,
  type DevicesRequest,
  type Envelope,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import { createGatewayApp } from '../app';
import { createTokenRegistry } from '../auth/tokens';
import { createGatewayMetrics } from '../index';
import { createOperatorPresence } from '../domain/operator-presence';

// The whole app on a loopback port with a bus whose search.rpc answers devices requests at once:
// the Host rule of a tokenless /health, what reaches the workers and how often. The real bus,
// workers and stores are in test/health.int.test.ts.
const tokens = {
  all: { id: 'all', token: 'health-token-all-00001', scopes: ['search' as const] },
  desk1: {
    id: 'desk1',
    token: 'health-token-desk1-0001',
    scopes: ['ingest' as const],
    devices: ['desk-1'],
  },
};

const frameMs = Date.parse('2026-11-22T10:00:00.000Z');
const audioMs = Date.parse('2026-11-22T09:59:00.000Z');

/** GET /health over node:http (fetch would not send a foreign Host). */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/health`, { headers }, (response) => {
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

/** The workers' side: what they were asked, and which kind of worker answers. */
interface FakeWorkers {
  asked: DevicesRequest[];
  /**
   * A current worker answers `newest`; one that predates the flag drops it and lists; `late`:
   * its store ran past the budget.
   */
  kind: 'current' | 'older' | 'late';
}

function busOf(workers: FakeWorkers): Bus {
  return {
    isConnected: () => true,
    call: (_queue: string, request: Envelope) => {
      workers.asked.push(request.payload as DevicesRequest);
      const reply: DevicesReply =
        workers.kind === 'late'
          ? { outcome: 'refused', code: 'deadline_exceeded', message: 'stopped at 1400 ms' }
          : workers.kind === 'current'
            ? { outcome: 'newest', newest: { frames: frameMs, transcription: audioMs } }
            : {
                outcome: 'listed',
                listing: [
                  { frame: frameMs - 5000, audio: null },
                  { frame: frameMs, audio: audioMs },
                ].map(({ frame, audio }, i) =>
                  toListingRow({
                    device_name: `desk-${i}`,
                    first_received_ms: 1,
                    last_received_ms: 2,
                    last_frame_ms: frame,
                    last_transcription_ms: audio,
                  }),
                ),
              };
      return Promise.resolve(createEnvelope('devices.reply', reply));
    },
  } as unknown as Bus;
}

describe('GET /health in the gateway', () => {
  let server: Server;
  let base: string;
  let port: string;
  let workers: FakeWorkers;

  /** A gateway of its own per test: its summary is read on the test's first /health. */
  async function start(kind: FakeWorkers['kind'] = 'current'): Promise<void> {
    workers = { asked: [], kind };
    const bus = busOf(workers);
    const logger = createLogger({ service: 'test', level: 'silent' });
    const app = createGatewayApp(
      {
        bus,
        auth: {
          tokens: createTokenRegistry(Object.values(tokens)),
          allowUnauthenticatedLoopback: false,
        },
        metrics: createGatewayMetrics(createMetrics()),
        logger,
        devices: {
          // Every answer here judged the same way, and no summary aging within a test.
          stallAfterMs: 1e13,
          healthAllowedHosts: ['monitor.example'],
          healthMaxAgeMs: 3_600_000,
        },
      },
      createOperatorPresence({ bus, logger }),
    );
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    port = String((server.address() as AddressInfo).port);
    base = `http://127.0.0.1:${port}`;
  }
  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('when a tokenless /health names a foreign Host, then 403 (foreign_host) in the error body naming the Host header, and nothing is read', async () => {
    await start();
    const refused: Array<Record<string, string>> = [
      { host: `attacker.example:${port}` },
      { host: `attacker.example:${port}`, authorization: 'Bearer not-a-token' },
      { host: `monitor.example.attacker.example:${port}` },
    ];
    for (const headers of refused) {
      const response = await get(base, headers);
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        success: false,
        message: expect.stringMatching(/loopback Host .* or one of GATEWAY_HEALTH_ALLOWED_HOSTS/),
        errors: [expect.objectContaining({ path: 'headers.host' })],
      });
    }
    expect(workers.asked).toEqual([]);
  });

  it('when a tokenless /health names a loopback Host or an allowed one, or a valid token comes with any Host, then it is answered', async () => {
    await start();
    const served: Array<Record<string, string>> = [
      { host: `127.0.0.1:${port}` },
      { host: `localhost:${port}`, origin: 'tauri://localhost' },
      { host: '[::1]' },
      { host: `Monitor.Example:${port}` },
      { host: 'monitor.example' },
      { host: `attacker.example:${port}`, authorization: `Bearer ${tokens.all.token}` },
    ];
    for (const headers of served) {
      const response = await get(base, headers);
      expect([response.status, response.body.status]).toEqual([200, 'healthy']);
    }
  });

  it('when many callers poll at once, then one summary read serves them all, asked as newest with the listing for older workers', async () => {
    await start();
    const answers = await Promise.all(Array.from({ length: 16 }, () => get(base)));

    expect(answers.map((a) => a.body.last_frame_timestamp)).toEqual(
      Array.from({ length: 16 }, () => new Date(frameMs).toISOString()),
    );
    expect(answers[0]?.body.last_audio_timestamp).toBe(new Date(audioMs).toISOString());
    // 2 s (HEALTH_TIMEOUT_MS) split as a search's: 0.4 s to be taken, 1.4 s for the store.
    expect(workers.asked).toEqual([{ newest: true, listing: true, budget_ms: 1400 }]);
  });

  it("when a token is bound to devices, then the summary is those devices', read apart from the fleet's", async () => {
    await start();
    await get(base);
    const bound = await get(base, { authorization: `Bearer ${tokens.desk1.token}` });
    await get(base, { authorization: `Bearer ${tokens.desk1.token}` });

    expect(bound.body.status).toBe('healthy');
    expect(workers.asked).toEqual([
      { newest: true, listing: true, budget_ms: 1400 },
      { devices: ['desk-1'], newest: true, listing: true, budget_ms: 1400 },
    ]);
  });

  it('when the worker predates the newest flag and answers the listing, then the times are folded from it', async () => {
    await start('older');

    const response = await get(base);
    expect(response.body).toMatchObject({
      status: 'healthy',
      last_frame_timestamp: new Date(frameMs).toISOString(),
      last_audio_timestamp: new Date(audioMs).toISOString(),
    });
    expect(workers.asked).toHaveLength(1);
  });

  it('when the store cannot read the summary within its budget, then /health is degraded naming the content store', async () => {
    await start('late');

    const response = await get(base);
    expect([response.status, response.body.status, response.body.message]).toEqual([
      200,
      'degraded',
      'degraded: content store unavailable',
    ]);
  });
});

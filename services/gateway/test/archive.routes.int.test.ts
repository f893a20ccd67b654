/**
 * The archive routes against the real RabbitMQ: a small responder consuming `archive.rpc` plays
 * the archive worker, so what the gateway relays and how it maps each answer is seen on the wire.
 */
import { createAmqpBus, type Bus, type Subscription } from '@screenfleet/bus';
import {
  createEnvelope,
  queueNames,
  topology,
  validators,
  type ArchiveCommand,
  type ArchiveStatus,
  type Envelope,
  type MessageType,
} from '@screenfleet/contracts';
import { createLogger, waitFor } from '@screenfleet/runtime';
import { closeBrokerConnections, isolatedBroker, uniqueName } from '../../../test/services';
import {
  get,
  post,
  startGateway,
  tokens,
  type RunningGateway,
} from '../../../test/support/gateway';

const TIMEOUT_MS = 1000;
/** How late past its timeout a 503 may come: timer and event-loop slack on a busy machine. */
const MARGIN_MS = 500;

const status: ArchiveStatus = {
  enabled: true,
  retention_days: 7,
  watermark: '2026-11-01T08:30:00.000Z',
  last_cleanup: '2026-11-16T08:35:12.000Z',
  last_error: null,
  // Past 2^32: sizes in bytes of a months-long archive must survive as numbers.
  storage_used: 161_061_273_600,
  storage_limit: 536_870_912_000,
  pending_count: 4321,
  is_uploading: false,
  chunks_uploaded: 17,
  media_files_uploaded: 250,
  media_files_pending: 0,
};

type Behaviour = (command: ArchiveCommand) => unknown;

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await run();
  return [result, performance.now() - started];
}

describe('archive routes relayed to an archive worker over archive.rpc', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let worker: Bus;
  let serving: Subscription;
  const received: Envelope<ArchiveCommand>[] = [];
  let behaviour: Behaviour = () => ({ outcome: 'ok', status });
  let replyType: MessageType = 'archive.reply';

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url, { archiveTimeoutMs: TIMEOUT_MS });
    worker = await createAmqpBus({
      url: broker.url,
      topology,
      connectionName: uniqueName('archive-responder'),
      logger: createLogger({ service: 'archive-responder', level: 'silent' }),
    });
    serving = await worker.serve<ArchiveCommand, unknown>(queueNames.archiveRpc, (request) => {
      received.push(request);
      return Promise.resolve(
        createEnvelope(replyType, behaviour(request.payload), {
          correlationId: request.correlation_id,
        }),
      );
    });
  });
  afterAll(async () => {
    await serving?.cancel();
    await worker?.close();
    await gateway?.close();
    await broker?.remove();
  });
  beforeEach(() => {
    received.length = 0;
    behaviour = () => ({ outcome: 'ok', status });
    replyType = 'archive.reply';
  });

  const url = (path: string) => `${gateway.url}${path}`;
  const archiveCalls = async (action: string, result: string): Promise<number> => {
    const metric = await gateway.registry.getSingleMetric('gateway_archive_rpc_total')?.get();
    const value = metric?.values.find(
      (v) => v.labels.action === action && v.labels.result === result,
    );
    return value?.value ?? 0;
  };
  const statusCallsTimed = async (): Promise<number> => {
    const metric = await gateway.registry
      .getSingleMetric('gateway_archive_rpc_duration_seconds')
      ?.get();
    const value = metric?.values.find(
      (v) =>
        v.labels.action === 'status' &&
        (v as { metricName?: string }).metricName?.endsWith('_count'),
    );
    return value?.value ?? 0;
  };

  describe('GET /archive/status', () => {
    it('when the worker answers, then its status is relayed exactly: every field of the spec, numbers as numbers', async () => {
      const before = await archiveCalls('status', 'ok');
      const timedBefore = await statusCallsTimed();

      const response = await get(url('/archive/status'));

      expect(response.status).toBe(200);
      expect(response.body).toEqual(status);
      expect(Object.keys(response.body).sort()).toEqual(Object.keys(status).sort());
      expect(received).toHaveLength(1);
      expect(received[0]).toMatchObject({
        type: 'archive.command',
        payload: { action: 'status' },
        correlation_id: response.headers.get('x-request-id'),
      });
      expect(await archiveCalls('status', 'ok')).toBe(before + 1);
      expect(await statusCallsTimed()).toBe(timedBefore + 1);
    });

    it('when the worker adds fields the contract does not know, then only the spec fields are answered', async () => {
      behaviour = () => ({ outcome: 'ok', status: { ...status, internal_lease_owner: 'w-2' } });

      const response = await get(url('/archive/status'));

      expect(response.status).toBe(200);
      expect(response.body).toEqual(status);
    });

    it.each(['utc', 'UTC', 'Europe/Berlin'])(
      "when screenpipe's UI asks with ?timezone=%s, then the same UTC status is answered",
      async (timezone) => {
        const response = await get(url(`/archive/status?timezone=${timezone}`));

        expect(response.status).toBe(200);
        expect(response.body).toEqual(status);
      },
    );

    it('when the GET carries a JSON Content-Type, then it is irrelevant: 200', async () => {
      const response = await get(url('/archive/status'), tokens.all.token, {
        'content-type': 'application/json',
      });

      expect(response.status).toBe(200);
      expect(response.body).toEqual(status);
    });

    it('when the archive-read token asks, then it is answered; with no token 401, with a token lacking archive:read 403', async () => {
      expect((await get(url('/archive/status'), tokens.archiveReader.token)).status).toBe(200);

      const anonymous = await get(url('/archive/status'), null);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');

      const ingestOnly = await get(url('/archive/status'), tokens.ingestDesk1.token);
      expect(ingestOnly.status).toBe(403);
      expect(ingestOnly.body.message).toBe('token test-desk1 lacks the archive:read scope');
      expect(received).toHaveLength(1);
    });

    it('when a client POSTs to it, then 405 with Allow: GET and nothing is relayed', async () => {
      const response = await post(url('/archive/status'), {});

      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('GET');
      expect(received).toHaveLength(0);
    });

    it('when the worker answers a status with a null counter, then 502 naming the field, and nothing of it is relayed', async () => {
      behaviour = () => ({ outcome: 'ok', status: { ...status, chunks_uploaded: null } });
      const before = await archiveCalls('status', 'bad_gateway');

      const response = await get(url('/archive/status'));

      expect(response.status).toBe(502);
      expect(response.body).toEqual({
        success: false,
        code: 'bad_gateway',
        message: 'the archive worker sent an invalid reply: status.chunks_uploaded must be integer',
        errors: [],
      });
      expect(await archiveCalls('status', 'bad_gateway')).toBe(before + 1);
    });

    it('when the worker answers with a message of another type, then 502', async () => {
      replyType = 'operator.result';

      const response = await get(url('/archive/status'));

      expect(response.status).toBe(502);
      expect(response.body.message).toBe(
        'the archive worker sent an invalid reply: a operator.result message instead of archive.reply',
      );
    });
  });

  describe('POST /archive/configure, /init, /run, /restore', () => {
    it('when configure changes retention, then the request is relayed and 200 carries the status', async () => {
      const updated = { ...status, retention_days: 30, enabled: false };
      behaviour = () => ({ outcome: 'ok', status: updated });

      const response = await post(url('/archive/configure'), {
        enabled: false,
        retention_days: 30,
        ignored_extra: true,
      });

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        success: true,
        message: 'archive configuration updated',
        status: updated,
      });
      expect(validators.archiveActionResult.check(structuredClone(response.body))).toEqual([]);
      expect(received.map((r) => r.payload)).toEqual([
        { action: 'configure', request: { enabled: false, retention_days: 30 } },
      ]);
    });

    it.each([
      [{ retention_days: 0 }, 'retention_days', 'minimum'],
      [{ retention_days: 1.5 }, 'retention_days', 'type'],
      [{ retention_days: 'x' }, 'retention_days', 'type'],
      [{ enabled: 'yes' }, 'enabled', 'type'],
      [{ retention_days: 36_501 }, 'retention_days', 'maximum'],
    ])(
      'when configure sends %j, then 400 naming %s and rule %s, and nothing is relayed',
      async (body, path, rule) => {
        const response = await post(url('/archive/configure'), body);

        expect(response.status).toBe(400);
        expect(response.body.errors).toEqual([expect.objectContaining({ path, rule })]);
        expect(received).toHaveLength(0);
      },
    );

    it('when init retention_days is 0, then 400 naming the field', async () => {
      const response = await post(url('/archive/init'), { retention_days: 0 });

      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        { path: 'retention_days', rule: 'minimum', detail: 'retention_days must be >= 1' },
      ]);
    });

    it("when screenpipe's desktop app initialises with its cloud token, then the token is not relayed and 200 carries the status", async () => {
      const response = await post(url('/archive/init'), {
        token: 'screenpipe-cloud-token-secret',
        retention_days: 14,
      });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        success: true,
        message: 'archive initialised',
        status,
      });
      expect(received.map((r) => r.payload)).toEqual([
        { action: 'init', request: { retention_days: 14 } },
      ]);
      expect(JSON.stringify(received)).not.toContain('screenpipe-cloud-token-secret');
    });

    it('when the worker says init is a conflict (already initialised), then 409 with its message', async () => {
      behaviour = () => ({
        outcome: 'refused',
        code: 'conflict',
        message: 'the archive is already initialised',
      });
      const before = await archiveCalls('init', 'conflict');

      const response = await post(url('/archive/init'), {});

      expect(response.status).toBe(409);
      expect(response.body).toEqual({
        success: false,
        code: 'conflict',
        message: 'the archive is already initialised',
        errors: [],
      });
      expect(await archiveCalls('init', 'conflict')).toBe(before + 1);
    });

    it.each([
      ['validation_failed', 400, null, 'validation_failed'],
      ['store_unavailable', 503, '5', 'store_unavailable'],
      ['failed', 500, null, 'operation_failed'],
    ])(
      'when the worker refuses with %s, then %i',
      async (code, httpStatus, retryAfter, answered) => {
        behaviour = () => ({ outcome: 'refused', code, message: `worker says ${code}` });

        const response = await post(url('/archive/configure'), { retention_days: 3 });

        expect(response.status).toBe(httpStatus);
        expect(response.headers.get('retry-after')).toBe(retryAfter);
        expect(response.body).toEqual({
          success: false,
          code: answered,
          message: `worker says ${code}`,
          errors: [],
        });
      },
    );

    it("when run is posted as screenpipe's app does (no body, no Content-Type), then 200", async () => {
      const response = await fetch(url('/archive/run'), {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.all.token}` },
      });

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        success: true,
        message: 'archive run started',
        status,
      });
      expect(received.map((r) => r.payload)).toEqual([{ action: 'run' }]);
    });

    it('when restore is asked, then the range is relayed and 200 carries the restored count and the status', async () => {
      behaviour = () => ({ outcome: 'ok', status, restored: 1250 });
      const request = {
        from: '2026-10-01T00:00:00Z',
        to: '2026-10-02T00:00:00Z',
        device_name: 'desk-1',
      };

      const response = await post(url('/archive/restore'), request);

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        success: true,
        message: 'archive restore finished: 1250 items restored',
        restored: 1250,
        status,
      });
      expect(received.map((r) => r.payload)).toEqual([{ action: 'restore', request }]);
    });

    it('when the worker restored some items but could not read some objects, then 200 names them, counts them, and the message says so', async () => {
      const unreadable = [
        {
          key: 'manifests/2026/10/01/20261001T000000000Z-20261001T010000000Z-0123456789abcdef.json.sfa',
          reason: 'sealed with key 3fa2c1d09e8b7a65, which is not among ARCHIVE_ENCRYPTION_KEYS',
        },
      ];
      behaviour = () => ({
        outcome: 'ok',
        status,
        restored: 40,
        unreadable,
        unreadable_count: 3,
      });

      const response = await post(url('/archive/restore'), {
        from: '2026-10-01T00:00:00Z',
        to: '2026-10-02T00:00:00Z',
      });

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        success: true,
        message:
          'archive restore finished: 40 items restored; 3 archived objects could not be read, their items are not restored (see unreadable)',
        restored: 40,
        unreadable,
        unreadable_count: 3,
        status,
      });
      expect(validators.archiveActionResult.check(structuredClone(response.body))).toEqual([]);
    });

    it.each([
      [{ from: '2026-10-01T00:00:00Z' }, 'to', 'required'],
      [{ from: 'yesterday', to: '2026-10-02T00:00:00Z' }, 'from', 'format'],
      [
        { from: '2026-10-01T00:00:00Z', to: '2026-10-02T00:00:00Z', device_name: 'x'.repeat(201) },
        'device_name',
        'maxLength',
      ],
    ])('when restore sends %j, then 400 naming %s (%s)', async (body, path, rule) => {
      const response = await post(url('/archive/restore'), body);

      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([expect.objectContaining({ path, rule })]);
      expect(received).toHaveLength(0);
    });

    it.each([
      ['ends before it starts', '2026-10-02T00:00:00Z', '2026-10-01T00:00:00Z'],
      ['is empty', '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z'],
    ])(
      'when a restore range %s, then 400 naming both from and to, and nothing is relayed',
      async (_, from, to) => {
        const response = await post(url('/archive/restore'), { from, to });

        expect(response.status).toBe(400);
        expect(response.body.errors).toEqual([
          { path: 'from', rule: 'range', detail: 'from must be before to (to is exclusive)' },
          { path: 'to', rule: 'range', detail: 'to must be after from (to is exclusive)' },
        ]);
        expect(received).toHaveLength(0);
      },
    );

    it('when a restore reply lacks the restored count, then 502', async () => {
      const response = await post(url('/archive/restore'), {
        from: '2026-10-01T00:00:00Z',
        to: '2026-10-02T00:00:00Z',
      });

      expect(response.status).toBe(502);
      expect(response.body.message).toBe(
        'the archive worker sent an invalid reply: a restore reply without the restored count',
      );
    });

    it('when a token has only archive:read, then the writes are 403 and nothing is relayed', async () => {
      for (const path of [
        '/archive/configure',
        '/archive/init',
        '/archive/run',
        '/archive/restore',
      ]) {
        const response = await post(url(path), {}, tokens.archiveReader.token);
        expect(response.status).toBe(403);
        expect(response.body.message).toBe(
          'token test-archive-reader lacks the archive:write scope',
        );
      }
      expect(received).toHaveLength(0);
    });

    it('when an unauthenticated client posts a broken body, then 401: the body is not read before auth', async () => {
      const response = await fetch(url('/archive/configure'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{not json',
      });

      expect(response.status).toBe(401);
    });

    it('when configure is posted as text/plain, then 415', async () => {
      const response = await fetch(url('/archive/configure'), {
        method: 'POST',
        headers: { 'content-type': 'text/plain', authorization: `Bearer ${tokens.all.token}` },
        body: '{"enabled":false}',
      });

      expect(response.status).toBe(415);
      expect(received).toHaveLength(0);
    });

    it('when a write route gets a GET, then 405 with Allow: POST', async () => {
      const response = await get(url('/archive/run'));

      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    });
  });
});

describe('archive routes with no archive worker', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  /** Waits long enough for rabbitmqctl to close its connection while a call is pending. */
  let patientGateway: RunningGateway;
  const PATIENT_TIMEOUT_MS = 40_000;

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url, { archiveTimeoutMs: TIMEOUT_MS });
    // A slow first reconnect leaves a window in which the gateway has no broker.
    patientGateway = await startGateway(broker.url, {
      archiveTimeoutMs: PATIENT_TIMEOUT_MS,
      reconnectMs: 3000,
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await patientGateway?.close();
    await broker?.remove();
  });

  it('when nobody consumes archive.rpc, then 503 with Retry-After within the timeout, saying the worker did not answer', async () => {
    const [response, elapsed] = await timed(() =>
      get(`${gateway.url}/archive/status?timezone=utc`),
    );

    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(response.body).toEqual({
      success: false,
      code: 'worker_unavailable',
      message: `no answer from the archive worker within ${TIMEOUT_MS} ms (is one running?)`,
      errors: [],
    });
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
  });

  it('when nobody consumes archive.rpc, then a write is a 503 in time too', async () => {
    const [response, elapsed] = await timed(() =>
      post(`${gateway.url}/archive/configure`, { retention_days: 5 }),
    );

    expect(response.status).toBe(503);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
  });

  it('when a worker starts after the gateway gave up, then the expired commands never reach it', async () => {
    const late = await post(`${gateway.url}/archive/configure`, { enabled: false });
    expect(late.status).toBe(503);
    const worker = await createAmqpBus({
      url: broker.url,
      topology,
      connectionName: uniqueName('late-worker'),
      logger: createLogger({ service: 'late-worker', level: 'silent' }),
    });
    const received: ArchiveCommand[] = [];
    const serving = await worker.serve<ArchiveCommand, unknown>(queueNames.archiveRpc, (r) => {
      received.push(r.payload);
      return Promise.resolve(
        createEnvelope(
          'archive.reply',
          { outcome: 'ok', status },
          { correlationId: r.correlation_id },
        ),
      );
    });
    try {
      // A fresh status call is served, so the worker is consuming; nothing older came before it.
      const fresh = await get(`${gateway.url}/archive/status`);
      expect(fresh.status).toBe(200);
      expect(received).toEqual([{ action: 'status' }]);
    } finally {
      await serving.cancel();
      await worker.close();
    }
  });

  it('when the broker connection is lost while waiting, then 503 at once with the reason; while it is down, 503 "not connected"', async () => {
    const disconnected = new Promise<void>((resolve) =>
      patientGateway.bus.events.once('disconnected', () => resolve()),
    );
    const reconnected = new Promise<void>((resolve) =>
      patientGateway.bus.events.once('connected', () => resolve()),
    );
    let answeredAt = 0;
    const waiting = get(`${patientGateway.url}/archive/status`).then((response) => {
      answeredAt = performance.now();
      return response;
    });
    // Waiting for a reply: the request is in archive.rpc, which nothing serves here.
    await waitFor(async () => (await patientGateway.bus.queueDepth(queueNames.archiveRpc)) > 0, {
      timeoutMs: 5000,
      what: 'the status request to be waiting in archive.rpc',
    });
    // rabbitmqctl is slow on a busy machine: time the answer from the moment the close is done.
    expect(await closeBrokerConnections(patientGateway.connectionName)).toBe(1);
    const closedAt = performance.now();

    const lost = await waiting;
    expect(lost.status).toBe(503);
    expect(lost.headers.get('retry-after')).toBe('5');
    expect(lost.body.message).toMatch(/^lost the broker connection while waiting for a reply/);
    expect(answeredAt - closedAt).toBeLessThan(MARGIN_MS);

    await disconnected;
    const down = await get(`${patientGateway.url}/archive/status`);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({
      success: false,
      code: 'broker_unavailable',
      message: 'not connected to the broker',
      errors: [],
    });
    const downWrite = await post(`${patientGateway.url}/archive/run`, {});
    expect(downWrite.status).toBe(503);
    await reconnected;
  });
});

/**
 * The token, enrolment and audit routes against the real RabbitMQ (ADR 0019): a small server on
 * tokens.rpc.v1 and search.rpc plays the ingest workers, answering the contract, and a consumer
 * of audit.v1 reads what the gateway publishes. What travels, how each answer maps, and that no
 * secret reaches the gateway's logs are seen on the wire.
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { createAmqpBus, type Bus, type Subscription } from '@screenfleet/bus';
import {
  createEnvelope,
  queueNames,
  topology,
  type AuditRecord,
  type AuditReply,
  type AuditRequest,
  type Envelope,
  type TokensReply,
  type TokensRequest,
  type TokenView,
} from '@screenfleet/contracts';
import type { TokenEntry } from '@screenfleet/gateway';
import { createLogger, waitFor } from '@screenfleet/runtime';
import { isolatedBroker, uniqueName } from '../../../test/services';
import {
  get,
  post,
  startGateway,
  tokens,
  type RunningGateway,
} from '../../../test/support/gateway';

const admin = {
  id: 'test-admin',
  token: 'test-token-admin-tokens-audit-01',
  scopes: ['tokens:admin', 'audit:read'],
} satisfies TokenEntry;
const operatorDesk1 = {
  id: 'test-operator-desk1',
  token: 'test-token-operator-desk-1-01',
  scopes: ['operator'],
  devices: ['desk-1'],
} satisfies TokenEntry;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const buildToken = (overrides: Partial<TokenView> = {}): TokenView => ({
  id: 'tok_3f9c2a7d41b0e865',
  name: 'desk-17',
  scopes: ['ingest'],
  devices: ['desk-17'],
  created_at: '2026-11-29T10:00:00.000Z',
  expires_at: null,
  last_used_at: null,
  revoked_at: null,
  rate_limits: null,
  ...overrides,
});

/** The worker's answer to a tokens request: a stored token made of what was asked, by default. */
type TokensBehaviour = (request: TokensRequest) => TokensReply;
const storing: TokensBehaviour = (request) => {
  switch (request.op) {
    case 'create':
      return {
        outcome: 'token',
        token: buildToken({
          id: request.id,
          name: request.name,
          scopes: request.scopes,
          devices: request.devices,
        }),
      };
    case 'enrol':
      return {
        outcome: 'token',
        token: buildToken({ id: request.token_id, devices: [request.device_name] }),
      };
    case 'list':
      return { outcome: 'tokens', tokens: [buildToken()] };
    case 'revoke':
      return request.id === 'tok_0000000000000000'
        ? { outcome: 'refused', code: 'not_found', message: `no token ${request.id}` }
        : {
            outcome: 'token',
            token: buildToken({ id: request.id, revoked_at: '2026-11-29T11:00:00.000Z' }),
          };
    case 'create_code':
    case 'list_codes':
    case 'revoke_code':
    case 'snapshot':
    case 'used':
      return { outcome: 'refused', code: 'failed', message: `no ${request.op} here` };
  }
};

async function request(url: string, method: string, token: string | null, body?: unknown) {
  const response = await fetch(url, {
    method,
    headers: {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('token, enrolment and audit routes relayed to the ingest workers', () => {
  let broker: { url: string; remove(): Promise<void> };
  let gateway: RunningGateway;
  let worker: Bus;
  const subscriptions: Subscription[] = [];
  const logLines: string[] = [];
  const tokensReceived: Envelope<TokensRequest>[] = [];
  const auditAsked: Envelope<AuditRequest>[] = [];
  /** audit.v1 as the workers would read it, by the request id each record names (its correlation id). */
  const auditByRequest = new Map<string, AuditRecord>();
  let tokensBehaviour: TokensBehaviour = storing;
  let auditBehaviour: (request: AuditRequest) => AuditReply = () => ({
    outcome: 'ok',
    rows: [],
    next_cursor: null,
  });

  beforeAll(async () => {
    broker = await isolatedBroker();
    gateway = await startGateway(broker.url, {
      extraTokens: [admin, operatorDesk1],
      operatorTimeoutMs: 1000,
      logger: createLogger({
        service: 'gateway',
        level: 'debug',
        destination: new Writable({
          write(chunk: Buffer, _encoding, done) {
            logLines.push(chunk.toString());
            done();
          },
        }),
      }),
    });
    worker = await createAmqpBus({
      url: broker.url,
      topology,
      connectionName: uniqueName('tokens-responder'),
      logger: createLogger({ service: 'tokens-responder', level: 'silent' }),
    });
    subscriptions.push(
      await worker.serve<TokensRequest, TokensReply>(queueNames.tokensRpc, (request) => {
        tokensReceived.push(request);
        return Promise.resolve(
          createEnvelope('tokens.reply', tokensBehaviour(request.payload), {
            correlationId: request.correlation_id,
          }),
        );
      }),
      await worker.serve<AuditRequest, AuditReply>(queueNames.searchRpc, (request) => {
        auditAsked.push(request);
        return Promise.resolve(
          createEnvelope('audit.reply', auditBehaviour(request.payload), {
            correlationId: request.correlation_id,
          }),
        );
      }),
      await worker.consume<AuditRecord>(
        queueNames.audit,
        (delivery) => {
          auditByRequest.set(delivery.envelope.correlation_id, delivery.envelope.payload);
          return Promise.resolve('ack');
        },
        { prefetch: 10 },
      ),
    );
  });
  afterAll(async () => {
    for (const subscription of subscriptions) await subscription.cancel();
    await worker?.close();
    await gateway?.close();
    await broker?.remove();
  });
  beforeEach(() => {
    tokensReceived.length = 0;
    auditAsked.length = 0;
    tokensBehaviour = storing;
  });

  const url = (path: string) => `${gateway.url}${path}`;
  const secrets: string[] = [];

  describe('POST /tokens', () => {
    it('when an admin creates a token, then 201 answers a secret sf_... and the worker received only its SHA-256', async () => {
      const response = await post(
        url('/tokens'),
        { name: 'desk-17', scopes: ['ingest'], devices: ['desk-17'] },
        admin.token,
      );

      expect(response.status).toBe(201);
      const secret = String(response.body.secret);
      secrets.push(secret);
      expect(secret).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);
      expect(tokensReceived).toHaveLength(1);
      const sent = tokensReceived[0]!;
      expect(sent.payload).toMatchObject({
        op: 'create',
        actor: admin.id,
        name: 'desk-17',
        scopes: ['ingest'],
        devices: ['desk-17'],
        expires_at_ms: null,
        rate_limits: null,
        secret_hash: sha256(secret),
      });
      expect(JSON.stringify(sent)).not.toContain(secret);
      expect(response.body.token).toMatchObject({ id: (sent.payload as { id: string }).id });
    });

    it('when the body breaks the contract, then 400 names each field and rule, and nothing is sent', async () => {
      const response = await post(
        url('/tokens'),
        { name: '', scopes: ['root'], expires_at: '2020-01-01T00:00:00Z' },
        admin.token,
      );

      expect(response.status).toBe(400);
      const fields = (response.body.errors as Array<{ path: string; rule: string }>).map(
        (e) => `${e.path}:${e.rule}`,
      );
      expect(fields).toEqual(expect.arrayContaining(['name:minLength', 'scopes[0]:enum']));
      expect(tokensReceived).toHaveLength(0);
    });

    it('when expires_at is past, then 400 names expires_at', async () => {
      const response = await post(
        url('/tokens'),
        { name: 'late', scopes: ['ingest'], expires_at: '2020-01-01T00:00:00Z' },
        admin.token,
      );

      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        expect.objectContaining({ path: 'expires_at', rule: 'future' }),
      ]);
    });

    it('when the token lacks tokens:admin, then 403', async () => {
      const response = await post(
        url('/tokens'),
        { name: 'x', scopes: ['ingest'] },
        operatorDesk1.token,
      );
      expect(response.status).toBe(403);
    });

    it('when the worker refuses with conflict or validation_failed, then 409 and 502', async () => {
      tokensBehaviour = () => ({ outcome: 'refused', code: 'conflict', message: 'id taken' });
      expect(
        (await post(url('/tokens'), { name: 'x', scopes: ['ingest'] }, admin.token)).status,
      ).toBe(409);
      tokensBehaviour = () => ({ outcome: 'refused', code: 'validation_failed', message: 'no' });
      expect(
        (await post(url('/tokens'), { name: 'x', scopes: ['ingest'] }, admin.token)).status,
      ).toBe(502);
    });
  });

  describe('GET and DELETE /tokens', () => {
    it('when include_revoked is true, then it is asked; when it is not a boolean, then 400', async () => {
      const listed = await get(url('/tokens?include_revoked=true'), admin.token);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({ tokens: [buildToken()] });
      expect(tokensReceived[0]?.payload).toEqual({ op: 'list', include_revoked: true });

      const bad = await get(url('/tokens?include_revoked=maybe'), admin.token);
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([
        expect.objectContaining({ path: 'query.include_revoked', rule: 'enum' }),
      ]);
    });

    it('when a known token is revoked, then it is answered revoked', async () => {
      const response = await request(url('/tokens/tok_0123456789abcdef'), 'DELETE', admin.token);
      expect(response.status).toBe(200);
      expect(response.body.token).toMatchObject({
        id: 'tok_0123456789abcdef',
        revoked_at: expect.any(String),
      });
      expect(tokensReceived[0]?.payload).toEqual({
        op: 'revoke',
        actor: admin.id,
        id: 'tok_0123456789abcdef',
      });
    });

    it('when the id is unknown or malformed, then 404 not_found', async () => {
      const unknown = await request(url('/tokens/tok_0000000000000000'), 'DELETE', admin.token);
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('not_found');
      const malformed = await request(url('/tokens/not-a-token'), 'DELETE', admin.token);
      expect(malformed.status).toBe(404);
      expect(tokensReceived).toHaveLength(1);
    });

    it('when a token path is asked with another method, then 405 with Allow', async () => {
      const response = await fetch(url('/tokens/tok_0123456789abcdef'), {
        method: 'POST',
        headers: { authorization: `Bearer ${admin.token}` },
      });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('DELETE');
    });
  });

  describe('POST /enroll', () => {
    const code = `sfe_${'Q'.repeat(43)}`;

    it('when a desktop enrols with no token, then 201 answers its secret and the worker got the hashes', async () => {
      const response = await request(url('/enroll'), 'POST', null, { code, device_name: 'lab-17' });

      expect(response.status).toBe(201);
      const secret = String(response.body.secret);
      secrets.push(secret, code);
      expect(secret).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);
      expect(tokensReceived[0]?.payload).toEqual({
        op: 'enrol',
        code_hash: sha256(code),
        device_name: 'lab-17',
        token_id: expect.stringMatching(/^tok_[0-9a-f]{16}$/),
        secret_hash: sha256(secret),
      });
      expect(JSON.stringify(tokensReceived[0])).not.toContain(code);
    });

    it.each([
      'enrolment_code_invalid',
      'enrolment_code_revoked',
      'enrolment_code_expired',
      'enrolment_code_used_up',
      'device_not_allowed',
    ] as const)('when the worker refuses with %s, then 403 with that code', async (refusal) => {
      tokensBehaviour = () => ({ outcome: 'refused', code: refusal, message: 'refused' });

      const response = await request(url('/enroll'), 'POST', null, { code, device_name: 'lab-17' });

      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({
        code: refusal,
        message: expect.stringMatching(/enrolment code/),
      });
    });

    it('when the body lacks device_name, then 400 names it', async () => {
      const response = await request(url('/enroll'), 'POST', null, { code });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        expect.objectContaining({ path: 'device_name', rule: 'required' }),
      ]);
    });
  });

  describe('GET /audit', () => {
    it('when filters are given, then the worker is asked them (token as actor) and its page is answered', async () => {
      auditBehaviour = () => ({ outcome: 'ok', rows: [], next_cursor: 'c2' });

      const response = await get(
        url(
          '/audit?device=desk-1&token=test-all&action=operator.press&from=2026-11-29T10:00:00%2B02:00&limit=5&cursor=c1',
        ),
        admin.token,
      );

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ rows: [], next_cursor: 'c2' });
      expect(auditAsked[0]).toMatchObject({
        type: 'audit.request',
        payload: {
          device: 'desk-1',
          actor: 'test-all',
          action: 'operator.press',
          from: '2026-11-29T08:00:00Z',
          limit: 5,
          cursor: 'c1',
        },
      });
    });

    it('when the worker does not know the cursor, then 400 on query.cursor', async () => {
      auditBehaviour = () => ({
        outcome: 'refused',
        code: 'validation_failed',
        message: 'bad cursor',
      });

      const response = await get(url('/audit?cursor=forged'), admin.token);

      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([expect.objectContaining({ path: 'query.cursor' })]);
    });

    it('when a parameter is bad, then 400 names it and nothing is asked', async () => {
      const response = await get(url('/audit?limit=0'), admin.token);
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        expect.objectContaining({ path: 'query.limit', rule: 'minimum' }),
      ]);
      expect(auditAsked).toHaveLength(0);
    });
  });

  describe('audit rows of operator commands', () => {
    const rowOf = (requestId: string | null) =>
      waitFor(() => (requestId ? auditByRequest.get(requestId) : undefined), {
        timeoutMs: 5000,
        what: `the audit record of request ${requestId}`,
      });

    it('when a press goes to a device with no agent, then an audit.record says refused with its code', async () => {
      const response = await fetch(url('/experimental/operator/press-key-by-index'), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${operatorDesk1.token}`,
          'content-type': 'application/json',
          'x-request-id': uniqueName('press'),
        },
        body: JSON.stringify({ element_index: 3, key: 'enter', device_name: 'desk-1' }),
      });
      const requestId = response.headers.get('x-request-id');
      const body = (await response.json()) as { code?: string };

      expect(response.status).toBe(404);
      const row = await rowOf(requestId);
      expect(row).toMatchObject({
        actor: operatorDesk1.id,
        action: 'operator.press',
        device: 'desk-1',
        outcome: 'refused',
        outcome_code: body.code,
        duration_ms: expect.any(Number),
        details: { element_index: 3, key: 'enter' },
      });
    });

    it('when a press names a device its token is not bound to, then the row says refused forbidden_device', async () => {
      const response = await fetch(url('/experimental/operator/press-key-by-index'), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${operatorDesk1.token}`,
          'content-type': 'application/json',
          'x-request-id': uniqueName('press'),
        },
        body: JSON.stringify({ element_index: 1, key: 'a', device_name: 'desk-2' }),
      });

      expect(response.status).toBe(403);
      const row = await rowOf(response.headers.get('x-request-id'));
      expect(row).toMatchObject({
        actor: operatorDesk1.id,
        device: 'desk-2',
        outcome: 'refused',
        outcome_code: 'forbidden_device',
      });
    });

    it('when text is typed, then the row has its length and never the text', async () => {
      const text = 'hunter2-never-in-a-row';
      const response = await fetch(url('/experimental/operator/type-by-index'), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${operatorDesk1.token}`,
          'content-type': 'application/json',
          'x-request-id': uniqueName('type'),
        },
        body: JSON.stringify({ element_index: 2, text, device_name: 'desk-1' }),
      });

      const row = await rowOf(response.headers.get('x-request-id'));
      expect(row).toMatchObject({
        action: 'operator.type',
        details: { element_index: 2, text_length: text.length },
      });
      expect(JSON.stringify(row)).not.toContain(text);
    });
  });

  describe('audit rows of deletes and restores', () => {
    const rowOf = (requestId: string | null) =>
      waitFor(() => (requestId ? auditByRequest.get(requestId) : undefined), {
        timeoutMs: 5000,
        what: `the audit record of request ${requestId}`,
      });
    const send = async (path: string, token: string, body: unknown) => {
      const response = await fetch(url(path), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'x-request-id': uniqueName('audited'),
        },
        body: JSON.stringify(body),
      });
      return { status: response.status, requestId: response.headers.get('x-request-id') };
    };

    it('when a token bound to desk-1 deletes desk-2, then a data.delete_device row says refused', async () => {
      const { status, requestId } = await send('/data/delete-device', tokens.deleteDesk1.token, {
        device_name: 'desk-2',
      });

      expect(status).toBe(403);
      expect(await rowOf(requestId)).toMatchObject({
        actor: tokens.deleteDesk1.id,
        action: 'data.delete_device',
        device: 'desk-2',
        outcome: 'refused',
        outcome_code: 'forbidden_device',
        details: { device_name: 'desk-2' },
      });
    });

    it('when a token without archive:write restores, then an archive.restore row says refused', async () => {
      const { status, requestId } = await send('/archive/restore', tokens.archiveReader.token, {
        from: '2026-11-01T00:00:00Z',
        to: '2026-11-02T00:00:00Z',
      });

      expect(status).toBe(403);
      expect(await rowOf(requestId)).toMatchObject({
        actor: tokens.archiveReader.id,
        action: 'archive.restore',
        outcome: 'refused',
        outcome_code: 'forbidden_scope',
      });
    });
  });

  describe('POST /enroll rate limit', () => {
    let limited: RunningGateway;
    beforeAll(async () => {
      limited = await startGateway(broker.url, {
        rateLimits: { unauthenticated: { limit: 1, windowMs: 60_000 } },
      });
    });
    afterAll(async () => {
      await limited?.close();
    });

    it('when one address enrols past the unauthenticated limit, then 429 before the code is looked up', async () => {
      const body = { code: `sfe_${'R'.repeat(43)}`, device_name: 'lab-18' };
      const first = await request(`${limited.url}/enroll`, 'POST', null, body);
      secrets.push(String(first.body.secret));
      const second = await request(`${limited.url}/enroll`, 'POST', null, body);

      expect(first.status).toBe(201);
      expect(second.status).toBe(429);
      expect(second.body.code).toBe('rate_limited');
      expect(tokensReceived).toHaveLength(1);
    });
  });

  it('when every test has run, then no secret or code appears in the gateway logs', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(3);
    expect(logLines.length).toBeGreaterThan(0);
    const logs = logLines.join('');
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });
});

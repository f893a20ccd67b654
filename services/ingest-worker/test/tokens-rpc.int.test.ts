/**
 * Tokens as data (ADR 0019) through the ingest worker, in both modes: over the real RabbitMQ
 * (a vhost of its own, the system's queue names) with the real MongoDB-protocol server, and over
 * the in-process bus with the embedded mode's SQLite file. The test is the gateway's side of the
 * wire: tokens.request on tokens.rpc.v1, tokens.changed read from the tokens.events stream,
 * audit.record published on the audit exchange, audit.request on search.rpc.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createEnvelope,
  exchangeNames,
  queueNames,
  topology,
  validators,
  type AuditRecord,
  type AuditReply,
  type AuditRequest,
  type Envelope,
  type TokensChanged,
  type TokensReply,
  type TokensRequest,
} from '@screenfleet/contracts';
import { createAmqpBus, createMemoryBus, type Bus, type BusEvents } from '@screenfleet/bus';
import { createIngestWorker, type IngestWorker } from '@screenfleet/ingest-worker';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import {
  createMongoAuditStore,
  createMongoContentStore,
  createMongoTokenStore,
  createSqliteAuditStore,
  createSqliteContentStore,
  createSqliteTokenStore,
  openSqliteDatabase,
  type AuditStore,
  type ContentStore,
  type TokenStore,
} from '@screenfleet/storage';
import { MongoClient } from 'mongodb';
import { databaseName, isolatedBroker, mongoUrl } from '../../../test/services';

const logger = createLogger({ service: 'tokens-rpc-test', level: 'silent' });

interface System {
  /** The worker's bus: the events of its consumers ('acked', 'dead-lettered'). */
  workerBus: Bus;
  /** The gateway's bus: a connection of its own on the broker, the same bus in memory. */
  client: Bus;
  worker: IngestWorker;
}

interface Mode {
  name: string;
  start(): Promise<System>;
}

/** What a test opened, closed after it in reverse order whatever happened. */
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function startWorker(
  bus: Bus,
  stores: { content: ContentStore; tokens: TokenStore; audit: AuditStore },
) {
  const worker = createIngestWorker({
    bus,
    store: stores.content,
    tokenStore: stores.tokens,
    auditStore: stores.audit,
    logger,
    registry: createMetrics(),
    prefetch: 10,
    grouping: { maxWeight: 100, maxWaitMs: 5 },
    retry: { initialMs: 50, maxMs: 500 },
    searchPrefetch: 4,
  });
  cleanups.push(() => worker.stop());
  return worker;
}

const distributed: Mode = {
  name: 'distributed (RabbitMQ, FerretDB)',
  async start() {
    const broker = await isolatedBroker();
    cleanups.push(() => broker.remove());
    const database = databaseName('tokens_rpc');
    cleanups.push(async () => {
      const client = await MongoClient.connect(mongoUrl(), { serverSelectionTimeoutMS: 5000 });
      try {
        await client.db(database).dropDatabase();
      } finally {
        await client.close();
      }
    });
    const options = { url: mongoUrl(), database, serverSelectionTimeoutMS: 3000 };
    const stores = {
      content: createMongoContentStore(options),
      tokens: createMongoTokenStore(options),
      audit: createMongoAuditStore(options),
    };
    cleanups.push(() =>
      Promise.all([stores.content.close(), stores.tokens.close(), stores.audit.close()]),
    );
    const bus = async (connectionName: string) => {
      const opened = await createAmqpBus({ url: broker.url, topology, connectionName, logger });
      cleanups.push(() => opened.close());
      return opened;
    };
    const workerBus = await bus('tokens-rpc-worker');
    const client = await bus('tokens-rpc-gateway');
    const worker = startWorker(workerBus, stores);
    await worker.start();
    return { workerBus, client, worker };
  },
};

const embedded: Mode = {
  name: 'embedded (in-process bus, SQLite)',
  async start() {
    const dir = mkdtempSync(path.join(tmpdir(), 'sf-tokens-rpc-'));
    cleanups.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
    const database = await openSqliteDatabase(path.join(dir, 'screenfleet.db'));
    cleanups.push(() => database.close());
    const stores = {
      content: createSqliteContentStore({ database }),
      tokens: createSqliteTokenStore({ database }),
      audit: createSqliteAuditStore({ database }),
    };
    const bus = createMemoryBus({ topology, logger });
    cleanups.push(() => bus.close());
    const worker = startWorker(bus, stores);
    await worker.start();
    return { workerBus: bus, client: bus, worker };
  },
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newTokenId = () => `tok_${randomBytes(8).toString('hex')}`;
const newCodeId = () => `enr_${randomBytes(8).toString('hex')}`;
const ADMIN = 'tok_0123456789abcdef';

async function ask(client: Bus, request: TokensRequest): Promise<TokensReply> {
  const reply = await client.call<TokensReply>(
    queueNames.tokensRpc,
    createEnvelope('tokens.request', request),
    { timeoutMs: 10_000 },
  );
  expect(reply.type).toBe('tokens.reply');
  expect(validators.tokensReply.check(reply.payload)).toEqual([]);
  return reply.payload;
}

async function readAudit(client: Bus, request: AuditRequest): Promise<AuditReply> {
  const reply = await client.call<AuditReply>(
    queueNames.searchRpc,
    createEnvelope('audit.request', request),
    { timeoutMs: 10_000 },
  );
  expect(reply.type).toBe('audit.reply');
  expect(validators.auditReply.check(reply.payload)).toEqual([]);
  return reply.payload;
}

/** Resolves with the first event that matches, or rejects after a deadline naming what. */
function nextEvent<E extends 'acked' | 'dead-lettered'>(
  bus: Bus,
  event: E,
  match: (...args: BusEvents[E]) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<BusEvents[E]> {
  return new Promise((resolve, reject) => {
    const listener = (...args: BusEvents[E]) => {
      if (!match(...args)) return;
      done();
      resolve(args);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no ${event} event for ${what} within ${timeoutMs} ms`));
    }, timeoutMs);
    function done() {
      clearTimeout(timer);
      bus.events.off(event, listener as never);
    }
    bus.events.on(event, listener as never);
  });
}

/** The tokens.changed events read from the stream from now on, and a wait for one. */
async function watchChanges(client: Bus) {
  const seen: TokensChanged[] = [];
  const waiters: Array<() => void> = [];
  const subscription = await client.consume<TokensChanged>(
    queueNames.tokensEvents,
    ({ envelope }) => {
      expect(validators.tokensChanged.check(envelope.payload)).toEqual([]);
      seen.push(envelope.payload);
      for (const wake of waiters.splice(0)) wake();
      // A stream keeps its entries whatever the reader answers: ack is flow control only.
      return Promise.resolve('ack');
    },
    { prefetch: 10 },
  );
  cleanups.push(() => subscription.cancel());
  return {
    seen,
    /** Resolves once an event with this reason was read (rejects after 10 s). */
    async reason(reason: string): Promise<void> {
      const deadline = Date.now() + 10_000;
      while (!seen.some((event) => event.reason === reason)) {
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(`no tokens.changed ${reason} within 10 s: ${JSON.stringify(seen)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}

const buildRecord = (overrides: Partial<AuditRecord> = {}): AuditRecord => ({
  id: randomUUID(),
  at: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString(),
  actor: ADMIN,
  action: 'operator.press',
  device: 'desk-1',
  outcome: 'ok',
  outcome_code: null,
  duration_ms: 42.5,
  details: { element: 3, key: 'Enter', modifiers: ['ctrl'] },
  ...overrides,
});

describe.each([distributed, embedded])('tokens.rpc and audit, $name', (mode) => {
  it('when a token is created, then the snapshot holds it by hash only; when it is revoked, then a tokens.changed event comes on the stream and the snapshot no longer holds it', async () => {
    const { client } = await mode.start();
    const changes = await watchChanges(client);
    const secret = `sf_${randomBytes(32).toString('base64url')}`;
    const id = newTokenId();

    const created = await ask(client, {
      op: 'create',
      actor: ADMIN,
      id,
      name: 'desk-17',
      scopes: ['ingest', 'search'],
      devices: ['desk-17'],
      expires_at_ms: null,
      rate_limits: { ingest: { limit: 100, window_seconds: 60 } },
      secret_hash: sha256(secret),
    });
    expect(created).toMatchObject({ outcome: 'token', token: { id, revoked_at: null } });
    await changes.reason('token.create');
    const snapshot = await ask(client, { op: 'snapshot' });
    expect(snapshot).toEqual({
      outcome: 'snapshot',
      tokens: [
        {
          id,
          scopes: ['ingest', 'search'],
          devices: ['desk-17'],
          expires_at_ms: null,
          rate_limits: { ingest: { limit: 100, window_seconds: 60 } },
          secret_hash: sha256(secret),
        },
      ],
    });
    expect(JSON.stringify(snapshot)).not.toContain(secret);

    const revoked = await ask(client, { op: 'revoke', actor: ADMIN, id });
    await changes.reason('token.revoke');

    expect(revoked).toMatchObject({ outcome: 'token', token: { id } });
    expect(await ask(client, { op: 'snapshot' })).toEqual({ outcome: 'snapshot', tokens: [] });
    expect(await ask(client, { op: 'revoke', actor: ADMIN, id: newTokenId() })).toMatchObject({
      outcome: 'refused',
      code: 'not_found',
    });
    expect(
      await ask(client, {
        op: 'create',
        actor: ADMIN,
        id: newTokenId(),
        name: 'same secret',
        scopes: ['search'],
        devices: null,
        expires_at_ms: null,
        rate_limits: null,
        secret_hash: sha256(secret),
      }),
    ).toMatchObject({ outcome: 'refused', code: 'conflict' });
    const trail = await readAudit(client, { limit: 10, actor: ADMIN });
    expect(trail).toMatchObject({
      outcome: 'ok',
      rows: [
        { action: 'token.revoke', outcome: 'ok', details: { token_id: id } },
        { action: 'token.create', outcome: 'ok', details: { token_id: id } },
      ],
    });
    expect(JSON.stringify(trail)).not.toContain(sha256(secret));
  });

  it('when more devices enrol at once than the code has uses, then exactly its uses make tokens, the rest are refused used up, and a name outside the pattern takes no use', async () => {
    const { client } = await mode.start();
    const code = `sfe_${randomBytes(32).toString('base64url')}`;
    const codeId = newCodeId();
    expect(
      await ask(client, {
        op: 'create_code',
        actor: ADMIN,
        id: codeId,
        name: 'lab',
        scopes: ['ingest'],
        device_pattern: 'desk-*',
        uses: 2,
        expires_at_ms: null,
        code_hash: sha256(code),
      }),
    ).toMatchObject({ outcome: 'code', code: { id: codeId, uses: 2, uses_left: 2 } });
    const enrol = (device: string) =>
      ask(client, {
        op: 'enrol',
        code_hash: sha256(code),
        device_name: device,
        token_id: newTokenId(),
        secret_hash: sha256(randomUUID()),
      });

    expect(await enrol('laptop-1')).toMatchObject({
      outcome: 'refused',
      code: 'device_not_allowed',
    });
    const replies = await Promise.all(['desk-1', 'desk-2', 'desk-3', 'desk-4'].map(enrol));

    const enrolled = replies.filter((reply) => reply.outcome === 'token');
    expect(enrolled).toHaveLength(2);
    expect(replies.filter((reply) => reply.outcome === 'refused')).toEqual([
      expect.objectContaining({ code: 'enrolment_code_used_up' }),
      expect.objectContaining({ code: 'enrolment_code_used_up' }),
    ]);
    for (const reply of enrolled) {
      expect(reply).toMatchObject({
        token: {
          scopes: ['ingest'],
          expires_at: null,
          name: expect.stringMatching(/^desk-\d \(lab\)$/) as string,
        },
      });
    }
    expect(await ask(client, { op: 'list_codes', include_revoked: false })).toMatchObject({
      outcome: 'codes',
      codes: [{ id: codeId, uses_left: 0 }],
    });
    expect(await enrol('desk-5')).toMatchObject({
      outcome: 'refused',
      code: 'enrolment_code_used_up',
    });
    expect(
      await ask(client, {
        op: 'enrol',
        code_hash: sha256('not a code'),
        device_name: 'desk-6',
        token_id: newTokenId(),
        secret_hash: sha256(randomUUID()),
      }),
    ).toMatchObject({ outcome: 'refused', code: 'enrolment_code_invalid' });
    const snapshot = await ask(client, { op: 'snapshot' });
    expect(snapshot.outcome === 'snapshot' && snapshot.tokens.map((t) => t.devices)).toEqual(
      expect.arrayContaining([[expect.stringMatching(/^desk-\d$/) as string]]),
    );
    expect(snapshot).toMatchObject({ tokens: { length: 2 } });
    const refusals = await readAudit(client, {
      limit: 10,
      actor: `enrolment:${codeId}`,
      action: 'token.enrol',
    });
    expect(
      refusals.outcome === 'ok' && refusals.rows.map((row) => row.outcome_code).sort(),
    ).toEqual([
      'device_not_allowed',
      'enrolment_code_used_up',
      'enrolment_code_used_up',
      'enrolment_code_used_up',
      null,
      null,
    ]);
  });

  it('when an audit record is published on the audit exchange, then it is a row audit.request reads; published again, it is stored once; an invalid one is dead', async () => {
    const { client, workerBus } = await mode.start();
    const record = buildRecord();
    const sent = [createEnvelope('audit.record', record), createEnvelope('audit.record', record)];

    for (const envelope of sent) {
      const acked = nextEvent(
        workerBus,
        'acked',
        (queue, acked) => queue === queueNames.audit && acked.message_id === envelope.message_id,
        `audit record ${envelope.message_id}`,
      );
      await client.publish(exchangeNames.audit, '', envelope);
      await acked;
    }

    expect(await readAudit(client, { limit: 10, device: 'desk-1' })).toEqual({
      outcome: 'ok',
      rows: [record],
      next_cursor: null,
    });
    const invalid: Envelope = createEnvelope('audit.record', { ...record, id: '' });
    const dead = nextEvent(
      workerBus,
      'dead-lettered',
      (queue, envelope) =>
        queue === queueNames.audit && envelope?.message_id === invalid.message_id,
      'the invalid audit record',
    );
    await client.publish(exchangeNames.audit, '', invalid);
    await dead;
    expect(await readAudit(client, { limit: 10, cursor: 'not-a-cursor' })).toMatchObject({
      outcome: 'refused',
      code: 'validation_failed',
    });
  });

  it('when audit rows fill more than a page, then audit.request pages them newest first by cursor', async () => {
    const { client, workerBus } = await mode.start();
    const base = Math.floor(Date.now() / 1000) * 1000;
    const records = [0, 1, 2].map((i) =>
      buildRecord({ at: new Date(base - i * 1000).toISOString(), device: 'desk-9' }),
    );
    for (const record of records) {
      const envelope = createEnvelope('audit.record', record);
      const acked = nextEvent(
        workerBus,
        'acked',
        (queue, acked) => queue === queueNames.audit && acked.message_id === envelope.message_id,
        `audit record ${record.id}`,
      );
      await client.publish(exchangeNames.audit, '', envelope);
      await acked;
    }

    const first = await readAudit(client, { limit: 2, device: 'desk-9' });
    expect(first).toMatchObject({ outcome: 'ok', rows: [records[0], records[1]] });
    const cursor = first.outcome === 'ok' ? first.next_cursor : null;
    expect(cursor).toEqual(expect.any(String));
    expect(await readAudit(client, { limit: 2, device: 'desk-9', cursor: cursor! })).toEqual({
      outcome: 'ok',
      rows: [records[2]],
      next_cursor: null,
    });
  });
});

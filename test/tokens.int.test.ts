/**
 * Tokens as data end to end, in both modes (issue #40, ADR 0019): `npm run tokens` as a user
 * runs it against the running system (distributed: the broker, two gateways; embedded: the data
 * directory of a running `npm start`), enrolment over HTTP, a token's own rate limit, the audit
 * rows, and no secret or enrolment code anywhere at rest or in a log.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { waitFor } from '@screenfleet/runtime';
import { mongoUrl } from './services';
import { get, post, tokens } from './support/gateway';
import { modes, startSystem, type RunningSystem } from './support/system';

const run = promisify(execFile);
const root = path.resolve(__dirname, '..');
const admin = tokens.admin.token;

/** Every secret and code this file saw: none may be found at rest or in a log. */
const secrets: string[] = [];

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function call(
  url: string,
  init: { method?: string; token?: string; body?: unknown } = {},
): Promise<Answer> {
  const response = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

const batch = (device: string) => ({
  device_name: device,
  content: { content_type: 'frames', data: [{ file_path: `/frames/${device}.png` }] },
});

describe.each(modes)('tokens as data in %s mode', (mode) => {
  let system: RunningSystem;

  beforeAll(async () => {
    system = await startSystem(mode, { gateways: 2 });
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
  });

  /** `npm run tokens -- <args> --json`, as a user runs it next to this system. */
  async function tokensCli(...args: string[]) {
    const { stdout, stderr } = await run(
      process.execPath,
      [path.join(root, 'services/ingest-worker/dist/bin/tokens.js'), ...args, '--json'],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...system.commandEnv },
      },
    );
    const reply = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    return { reply, stderr };
  }

  /** How long until `check` holds on every gateway, polled every 20 ms from now. */
  async function timeUntilEveryGateway(check: (url: string) => Promise<boolean>) {
    const started = performance.now();
    await Promise.all(
      system.urls.map((url) =>
        waitFor(() => check(url), {
          timeoutMs: 10_000,
          intervalMs: 20,
          what: `a change on ${url}`,
        }),
      ),
    );
    return performance.now() - started;
  }

  const whoAmI = async (url: string, secret: string) =>
    (await call(`${url}/auth/whoami`, { token: secret })).status;

  it('when the CLI creates a token, then it works on every gateway within a second, and stops within a second of its revocation', async () => {
    const created = await tokensCli(
      'create',
      '--name',
      'cli-desk',
      '--scopes',
      'ingest',
      '--devices',
      'cli-desk',
    );
    expect(created.stderr).toContain(
      mode === 'distributed'
        ? 'distributed: asking the ingest workers'
        : `embedded: writing ${system.dataDir}`,
    );
    const secret = created.reply.secret as string;
    secrets.push(secret);
    expect(secret).toMatch(/^sf_[A-Za-z0-9_-]{43}$/);
    const token = created.reply.token as { id: string; devices: string[] };
    expect(token.devices).toEqual(['cli-desk']);

    expect(
      await timeUntilEveryGateway(async (url) => (await whoAmI(url, secret)) === 200),
    ).toBeLessThan(1000);
    for (const url of system.urls) {
      expect((await call(`${url}/add`, { token: secret, body: batch('cli-desk') })).status).toBe(
        200,
      );
      const elsewhere = await call(`${url}/add`, { token: secret, body: batch('other-desk') });
      expect(elsewhere).toMatchObject({
        status: 403,
        body: { message: expect.stringContaining('not allowed for device "other-desk"') },
      });
    }

    const revoked = await tokensCli('revoke', token.id);
    expect(revoked.reply).toMatchObject({ outcome: 'token', token: { id: token.id } });
    expect(
      await timeUntilEveryGateway(async (url) => (await whoAmI(url, secret)) === 401),
    ).toBeLessThan(1000);
    const listed = await tokensCli('list', '--all');
    expect(listed.reply).toMatchObject({
      outcome: 'tokens',
      tokens: [{ id: token.id, name: 'cli-desk', revoked_at: expect.any(String) }],
    });
  });

  it('when a desktop enrols with a code, then it gets its own token bound to its name, and a used-up or unmatched code is refused with its reason', async () => {
    const code = await call(`${system.url}/enrolment-codes`, {
      token: admin,
      body: { name: 'lab', scopes: ['ingest'], device_pattern: 'lab-*', uses: 1 },
    });
    expect(code.status).toBe(201);
    const secretCode = code.body.secret as string;
    secrets.push(secretCode);

    const unmatched = await call(`${system.url}/enroll`, {
      body: { code: secretCode, device_name: 'desk-9' },
    });
    expect(unmatched).toMatchObject({ status: 403, body: { code: 'device_not_allowed' } });
    const enrolled = await call(`${system.url}/enroll`, {
      body: { code: secretCode, device_name: 'lab-1' },
    });
    expect(enrolled.status).toBe(201);
    const secret = enrolled.body.secret as string;
    secrets.push(secret);
    expect(enrolled.body.token).toMatchObject({ devices: ['lab-1'], scopes: ['ingest'] });
    const again = await call(`${system.url}/enroll`, {
      body: { code: secretCode, device_name: 'lab-2' },
    });
    expect(again).toMatchObject({ status: 403, body: { code: 'enrolment_code_used_up' } });
    expect(
      (await call(`${system.url}/enroll`, { body: { code: 'sfe_nope', device_name: 'lab-3' } }))
        .body,
    ).toMatchObject({ code: 'enrolment_code_invalid' });

    await timeUntilEveryGateway(async (url) => (await whoAmI(url, secret)) === 200);
    const last = system.urls[system.urls.length - 1]!;
    expect((await call(`${last}/add`, { token: secret, body: batch('lab-1') })).status).toBe(200);
    expect((await call(`${last}/add`, { token: secret, body: batch('lab-2') })).status).toBe(403);
  });

  it('when a token carries its own ingest limit, then the request past it is a 429 with Retry-After and the RateLimit headers', async () => {
    const created = await call(`${system.url}/tokens`, {
      token: admin,
      body: {
        name: 'limited',
        scopes: ['ingest'],
        rate_limits: { ingest: { limit: 2, window_seconds: 60 } },
      },
    });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;
    secrets.push(secret);
    await timeUntilEveryGateway(async (url) => (await whoAmI(url, secret)) === 200);

    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push(await call(`${system.url}/add`, { token: secret, body: batch('limited') }));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
    const refused = answers[2]!;
    expect(refused.body).toMatchObject({ code: 'rate_limited' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-policy')).toBe('"ingest";q=2;w=60');
    expect(refused.headers.get('ratelimit')).toMatch(/^"ingest";r=0;t=\d+$/);
  });

  it('when data is deleted, a press refused and a token revoked, then each is an audit row that GET /audit reads back', async () => {
    const deleted = await post(`${system.url}/data/delete-range`, {
      start_time: '2020-01-01T00:00:00Z',
      end_time: '2020-01-02T00:00:00Z',
    });
    expect(deleted.status).toBe(200);
    const pressed = await post(
      `${system.url}/experimental/operator/press-key-by-index`,
      { element_index: 3, key: 'a', device_name: 'no-such-desk' },
      tokens.operatorOnly.token,
    );
    expect(pressed.status).toBe(404);

    const rows = async (query: string) => {
      const page = await get(`${system.url}/audit?${query}`, admin);
      expect(page.status).toBe(200);
      return (page.body as unknown as { rows: Array<Record<string, unknown>> }).rows;
    };
    // Written by the ingest workers after the answers: read until they are there.
    await waitFor(
      async () => (await rows('action=operator.press&device=no-such-desk')).length > 0,
      {
        timeoutMs: 10_000,
        what: 'the refused press in the audit trail',
      },
    );
    expect(await rows('action=operator.press&device=no-such-desk')).toEqual([
      expect.objectContaining({
        actor: tokens.operatorOnly.id,
        device: 'no-such-desk',
        outcome: 'refused',
        outcome_code: 'device_unavailable',
        details: expect.objectContaining({ element_index: 3, key: 'a' }),
      }),
    ]);
    await waitFor(async () => (await rows('action=data.delete_range')).length > 0, {
      timeoutMs: 10_000,
      what: 'the delete in the audit trail',
    });
    expect(await rows(`action=data.delete_range&token=${tokens.all.id}`)).toEqual([
      expect.objectContaining({ outcome: 'ok', device: null }),
    ]);
    expect(await rows('action=token.revoke')).toEqual([
      expect.objectContaining({ actor: 'cli', outcome: 'ok', device: null }),
    ]);
  });

  it('when everything above is done, then no secret and no enrolment code is found in the data, the database or the logs', async () => {
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    const places: Array<[string, string]> = [['logs', system.allLogs()]];
    for (const file of filesUnder(system.dataDir)) {
      places.push([file, readFileSync(file).toString('latin1')]);
    }
    if (system.database) {
      const client = await MongoClient.connect(mongoUrl());
      try {
        const db = client.db(system.database);
        for (const { name } of await db.listCollections().toArray()) {
          const documents = await db.collection(name).find().toArray();
          places.push([`collection ${name}`, JSON.stringify(documents)]);
        }
      } finally {
        await client.close();
      }
    }
    const found = places.flatMap(([where, text]) =>
      secrets
        .filter((secret) => text.includes(secret) || text.includes(secret.slice(4)))
        .map(() => where),
    );
    expect(found).toEqual([]);
    // The scan reads what it should: the stored tokens' names are there.
    expect(places.some(([, text]) => text.includes('cli-desk'))).toBe(true);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

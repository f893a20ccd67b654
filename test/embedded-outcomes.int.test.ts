/**
 * What POST /add's answer says about what was stored, in the embedded mode (issue 27, ARCHITECTURE
 * "Local run"): a 503 means nothing of the batch was stored; once the ingest worker holds a
 * batch, the gateway waits for its commit and, if it cannot know, answers 500 outcome_unknown;
 * re-sending after any non-200 never stores an item twice, transcriptions included
 * (docs/adr/0009). Shown on `npm start`'s process with its SQLite file locked by another
 * process for longer than the gateway waits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@screenfleet/runtime';
import { openSqliteConnection } from '@screenfleet/storage';
import { buildBatch } from './support/content';
import { tokens } from './support/gateway';
import { startLauncher, type Launcher } from './support/system';

describe('embedded mode: a 503 from POST /add means nothing was stored', () => {
  let dataDir: string;
  let launcher: Launcher;
  let api: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sf-outcomes-'));
    launcher = startLauncher({
      DATA_DIR: dataDir,
      GATEWAY_PORT: '0',
      GATEWAY_OPS_PORT: '0',
      GATEWAY_TOKENS: JSON.stringify([tokens.all]),
      // The worker takes two batches at a time; the gateway waits 1 s for a batch to be taken
      // and 1 s more for the outcome of one that was.
      INGEST_PREFETCH: '2',
      GATEWAY_PUBLISH_TIMEOUT: '1s',
      GATEWAY_OUTCOME_TIMEOUT: '1s',
      // The worker's 'retrying' warnings tell when it holds both batches.
      LOG_LEVEL: 'warn',
    });
    api = `http://127.0.0.1:${await launcher.apiPort}`;
  });

  afterAll(async () => {
    await launcher?.stop('SIGINT');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const headers = {
    authorization: `Bearer ${tokens.all.token}`,
    'content-type': 'application/json',
  };

  async function add(body: unknown): Promise<{ status: number; code?: string }> {
    const response = await fetch(`${api}/add`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as { code?: string };
    return { status: response.status, ...(answer.code ? { code: answer.code } : {}) };
  }

  /** Items stored for the device, as search counts them (exact totals). */
  async function storedFor(device: string): Promise<number> {
    const response = await fetch(`${api}/search?device_name=${device}&limit=1`, { headers });
    return ((await response.json()) as { pagination: { total: number } }).pagination.total;
  }

  it('when the file is locked longer than the gateway waits, then the batches the worker held are 500 outcome_unknown and stored later, the others 503 and never stored, and re-sending every one stores each item once', async () => {
    // A transcription without a timestamp: its retry is the same item only by its words.
    const spoken = {
      device_name: 'held-mic',
      content: { content_type: 'transcription', data: { transcription: 'ship it on friday' } },
    };
    const frames = buildBatch('held-desk', 0, 3);
    const queued = ['queued-1', 'queued-2', 'queued-3'].map((device) => buildBatch(device, 0, 3));
    const holder = openSqliteConnection(path.join(dataDir, 'screenfleet.db'));
    holder.exec('BEGIN IMMEDIATE');
    let answers: Array<{ status: number; code?: string }>;
    try {
      // The first two go to the worker at once (its prefetch), which cannot commit them; the
      // other three wait behind them, untaken, until the gateway gives up on them.
      const held = [add(spoken), add(frames)];
      await waitFor(() => launcher.output().split('retrying').length > 2, {
        timeoutMs: 10_000,
        what: 'the worker to retry both batches it holds',
      });
      answers = await Promise.all([...held, ...queued.map(add)]);
      expect(answers).toEqual([
        { status: 500, code: 'outcome_unknown' },
        { status: 500, code: 'outcome_unknown' },
        { status: 503, code: 'broker_unavailable' },
        { status: 503, code: 'broker_unavailable' },
        { status: 503, code: 'broker_unavailable' },
      ]);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }

    // The worker held on to its two batches and commits them once the file is free; the 503s
    // were never taken, so nothing of them is there, now or later.
    await waitFor(
      async () => (await storedFor('held-desk')) === 3 && (await storedFor('held-mic')) === 1,
      { timeoutMs: 20_000, what: 'the two held batches to be stored' },
    );
    for (const batch of queued) expect(await storedFor(batch.device_name)).toBe(0);

    // Every client re-sends what was not a 200: each item is then stored exactly once.
    for (const body of [spoken, frames, ...queued]) expect((await add(body)).status).toBe(200);
    expect(await storedFor('held-mic')).toBe(1);
    expect(await storedFor('held-desk')).toBe(3);
    for (const batch of queued) expect(await storedFor(batch.device_name)).toBe(3);
  });
});

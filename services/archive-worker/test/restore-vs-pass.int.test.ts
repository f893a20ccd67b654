/**
 * A restore and an archive pass never overlap (issue 28, item 3), in both modes and across
 * processes: the pass in hand would finish its chunk and delete items the restore had just put
 * back (or counted as already there). Restores, passes and rekeys each hold the store's `task`
 * lease while they run; a restore that finds it taken is refused with a conflict (409) that
 * names what runs, and a pass waits for a restore to end.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConflictError } from '@screenfleet/contracts';
import { Registry } from '@screenfleet/runtime';
import { mongoUrl, s3Settings } from '../../../test/services';
import {
  allItems,
  byId,
  item,
  storesOf,
  waitUntil,
  workerFor,
  type Mode,
  type Stores,
} from './support';

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../dist/entry/restore-cli.js');
const range = {
  from: new Date(0).toISOString(),
  to: new Date(Date.now() - 7 * 86_400_000).toISOString(),
};

/** archive_passes_total{outcome} so far. */
async function passesWith(registry: Registry, outcome: string): Promise<number> {
  const metric = await registry.getSingleMetric('archive_passes_total')?.get();
  return metric?.values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

const gates: Array<() => void> = [];
/** A promise and the function that settles it: a step the test holds until it lets go. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  gates.push(open);
  return { open, opened };
}

describe.each<Mode>(['distributed', 'embedded'])('restore vs archive pass, %s mode', (mode) => {
  let s: Stores;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeEach(async () => {
    s = await storesOf(mode);
  });
  afterEach(async () => {
    for (const open of gates.splice(0)) open(); // a failed test must not leave a step held
    for (const worker of workers.splice(0)) await worker.stop();
    await s.close();
  });

  function worker(extra: Parameters<typeof workerFor>[1] = {}) {
    const w = workerFor(s, extra);
    workers.push(w);
    return w;
  }

  /** The restore CLI, another process on the same stores. */
  function restoreCli() {
    const given = s3Settings();
    const env: Record<string, string> =
      mode === 'distributed'
        ? {
            MONGODB_URL: mongoUrl(),
            MONGODB_DATABASE: s.database,
            ARCHIVE_STORE: 's3',
            S3_ENDPOINT: given.endpoint,
            S3_REGION: given.region,
            S3_BUCKET: s.s3!.bucket,
            S3_PREFIX: s.s3!.prefix,
            S3_ACCESS_KEY: given.credentials.accessKeyId,
            S3_SECRET_KEY: given.credentials.secretAccessKey,
            S3_FORCE_PATH_STYLE: String(given.forcePathStyle),
          }
        : { DATA_DIR: s.dataDir! };
    return run(process.execPath, [cli, '--from', range.from, '--to', range.to], {
      env: { PATH: process.env.PATH ?? '', ...env },
    }).catch((error: { code: number; stdout: string }) => error);
  }

  it('when a restore is asked while a pass is in hand (archive just disabled), then it is refused naming the pass, in this process and from another; once the pass has ended the restore puts every item back for good', async () => {
    const olds = Array.from({ length: 5 }, (_, i) => item(30 - i / 10));
    await s.content.insertItems(olds);
    const paused = gate();
    const release = gate();
    const passer = worker({
      onStep: async (step) => {
        if (step !== 'uploaded') return;
        paused.open();
        await release.opened;
      },
    });
    const other = worker(); // answers archive.rpc too, holds no lease
    await passer.start();
    await paused.opened;
    await other.execute({ action: 'configure', request: { enabled: false } });

    const refused = other.execute({ action: 'restore', request: range });
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    await expect(refused).rejects.toThrow(/^the archive is busy with an archive pass \(/);
    const fromCli = await restoreCli();
    expect(fromCli).toMatchObject({ code: 1 });
    expect(JSON.stringify(fromCli)).toMatch(/the archive is busy with an archive pass/);

    release.open();
    // The pass has ended once it gave the task lease up.
    await waitUntil(
      () => s.state.leaseHolder(new Date(), 'task'),
      (holder) => holder === null,
    );
    expect(await allItems(s.content)).toEqual([]); // the pass in hand finished its chunk
    const restored = await other.execute({ action: 'restore', request: range });

    expect(restored).toMatchObject({ restored: 5 });
    expect(byId(await allItems(s.content))).toEqual(byId(olds));
  });

  it('when a pass is due while a restore runs, then it starts only once the restore has ended', async () => {
    const olds = Array.from({ length: 5 }, (_, i) => item(30 - i / 10));
    await s.content.insertItems(olds);
    const first = worker();
    await first.start();
    await waitUntil(
      () => allItems(s.content),
      (docs) => docs.length === 0,
    );
    await first.stop();
    await first.execute({ action: 'configure', request: { enabled: false } });

    // The restore stops at its first read of an archived object until the test lets it go.
    const reading = gate();
    const release = gate();
    const events: string[] = [];
    const restorer = worker({
      archive: {
        ...s.archive,
        get: async (key) => {
          reading.open();
          await release.opened;
          return s.archive.get(key);
        },
      },
    });
    const restoring = restorer
      .execute({ action: 'restore', request: range })
      .then(() => events.push('restore ended'));
    await reading.opened;
    // Enabled again and asked to run while the restore is in hand: the pass must wait.
    const registry = new Registry();
    const passer = worker({
      registry,
      onStep: (step) => Promise.resolve(void (step === 'uploaded' && events.push('pass uploaded'))),
    });
    await passer.execute({ action: 'configure', request: { enabled: true } });
    await passer.start();
    await passer.execute({ action: 'run' });
    // Two of the pass's lease ticks (every lease_ttl/3 = 1 s) find the restore holding the task.
    const waited = await waitUntil(
      () => passesWith(registry, 'busy'),
      (count) => count >= 2,
    );
    expect(waited).toBeGreaterThanOrEqual(2);
    expect(events).toEqual([]);

    release.open();
    await restoring;
    await waitUntil(
      () => allItems(s.content),
      (docs) => docs.length === 0,
    );

    expect(events.slice(0, 2)).toEqual(['restore ended', 'pass uploaded']);
  });

  it('when the holder loses its leases while its delete call is in flight (issue 28, item 6), then a restore can run once they expired, and the late delete does not take the restored items: the holder puts them back', async () => {
    const olds = Array.from({ length: 5 }, (_, i) => item(30 - i / 10));
    await s.content.insertItems(olds);
    // The holder's delete call is held in flight, and meanwhile the holder can no longer renew
    // its leases (a stalled process, a partition from the state store): they expire.
    const deleting = gate();
    const release = gate();
    const landed = gate();
    let stalled = false;
    const holder = worker({
      content: {
        ...s.content,
        deleteByIds: async (ids) => {
          deleting.open();
          await release.opened;
          const deleted = await s.content.deleteByIds(ids);
          landed.open();
          return deleted;
        },
      },
      state: {
        ...s.state,
        acquireLease: (...args) =>
          stalled ? Promise.resolve(false) : s.state.acquireLease(...args),
      },
    });
    await holder.start();
    await deleting.opened;
    stalled = true;

    const other = worker();
    await other.execute({ action: 'configure', request: { enabled: false } });
    // Refused while the stalled holder's task lease runs; it expires after the TTL (3 s).
    const restored = await waitUntil(
      () =>
        other.execute({ action: 'restore', request: range }).then(
          (reply) => reply,
          (error: unknown) => error,
        ),
      (answer) => !(answer instanceof ConflictError),
    );
    expect(restored).toMatchObject({ outcome: 'ok' });
    expect(byId(await allItems(s.content))).toEqual(byId(olds));

    release.open(); // the late delete lands after the restore
    await landed.opened;

    const after = await waitUntil(
      () => allItems(s.content),
      (docs) => docs.length === olds.length,
    );
    expect(byId(after)).toEqual(byId(olds));
  });
});

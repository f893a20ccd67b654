import { createLogger, Registry } from '@screenfleet/runtime';
import { memoryStateStore } from '../../test/memory-ports';
import type { Archiver, PassReport } from '../domain/archive-pass';
import type { ArchiveCommands } from '../domain/archive-commands';
import { createArchiveMetrics } from '../metrics';
import { createArchiveLoop } from './archive-loop';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('archive loop', () => {
  it('when a pass outlasts the lease, then the holder keeps renewing it and no other worker gets in', async () => {
    const ttl = 150;
    const leases = memoryStateStore();
    let passes = 0;
    const done: PassReport = { outcome: 'done', chunks: 1, items: 1, mediaFiles: 0, failures: 0 };
    const archiver = {
      async runPass() {
        passes += 1;
        await sleep(4 * ttl); // one slow chunk: longer than the lease
        return done;
      },
    } as unknown as Archiver;
    const commands = {
      load: () => Promise.resolve({ run_requested_at: null }),
    } as unknown as ArchiveCommands;
    const loop = createArchiveLoop({
      archiver,
      commands,
      leases,
      holderId: 'a',
      leaseTtlMs: ttl,
      intervalMs: 60_000,
      retry: { initialMs: 1000, maxMs: 10_000 },
      logger: createLogger({ service: 'test', level: 'silent' }),
      metrics: createArchiveMetrics(new Registry()),
      now: () => new Date(),
    });
    loop.start();
    try {
      while (passes === 0) await sleep(5);
      for (let i = 0; i < 6; i += 1) {
        await sleep(ttl / 2);
        expect(await leases.acquireLease('b', ttl, new Date())).toBe(false);
      }
      expect(await loop.confirmLease()).toBe(true);
    } finally {
      await loop.stop();
    }
  });
});

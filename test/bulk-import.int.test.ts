/**
 * A bulk import in both modes (issue 27): items that share one whole-second timestamp are all
 * stored. The embedded store used to refuse past 32,768 in one millisecond, after the 200 (the
 * batch was dead-lettered); now there is no per-millisecond cap (docs/adr/0011). A system of its
 * own, so the 33,000 items do not slow the other end-to-end files' reads.
 */
import { buildItem } from './support/content';
import { post } from './support/gateway';
import { modes, startSystem, type RunningSystem } from './support/system';
import { waitUntil } from '../services/archive-worker/test/support';

describe.each(modes)('a bulk import in %s mode', (mode) => {
  let system: RunningSystem;

  beforeAll(async () => {
    system = await startSystem(mode);
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
  });

  it('when a bulk import sends 33,000 items with one whole-second timestamp, then every one is stored', async () => {
    // Past 32,768 in one millisecond, the old embedded store refused the rest after the 200
    // (dead-lettered): there is no per-millisecond cap any more (docs/adr/0011).
    const device = `${mode}-bulk`;
    const timestamp = '2026-11-20T08:00:00Z';
    const batches = Array.from({ length: 33 }, (_, b) => ({
      device_name: device,
      content: {
        content_type: 'frames',
        data: Array.from({ length: 1000 }, (_, i) =>
          buildItem(i, { file_path: `/import/${b}/${i}.png`, timestamp }),
        ),
      },
    }));
    for (let b = 0; b < batches.length; b += 3) {
      const answers = await Promise.all(
        batches.slice(b, b + 3).map((batch) => post(`${system.url}/add`, batch)),
      );
      for (const answer of answers) expect(answer.status).toBe(200);
    }

    const range = { device, to: new Date('2200-01-01T00:00:00Z') };
    expect(
      await waitUntil(
        () => system.content.countRange(range),
        (count) => count === 33_000,
        60_000,
      ),
    ).toBe(33_000);
  }, 120_000);
});

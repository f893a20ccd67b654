import type { ArchiveStatus } from '@screenfleet/contracts';
import { Registry } from '@screenfleet/runtime';
import { createArchiveMetrics } from './metrics';

function buildStatus(overrides: Partial<ArchiveStatus> = {}): ArchiveStatus {
  return {
    enabled: true,
    retention_days: 30,
    watermark: '2026-01-02T00:00:00.000Z',
    last_cleanup: '2026-03-01T00:00:00.000Z',
    last_error: null,
    storage_used: 1234,
    storage_limit: 5000,
    pending_count: 7,
    is_uploading: false,
    chunks_uploaded: 3,
    media_files_uploaded: 0,
    media_files_pending: 2,
    ...overrides,
  };
}

/** Every sample of the registry's text, `name{labels}` -> value. */
async function scrape(registry: Registry): Promise<Record<string, number>> {
  const samples: Record<string, number> = {};
  for (const line of (await registry.metrics()).split('\n')) {
    const match = /^(\S+) (\S+)$/.exec(line);
    if (match) samples[match[1]!] = Number(match[2]);
  }
  return samples;
}

describe('archive metrics', () => {
  it('when scraped, then the status gauges show GET /archive/status in base units, read once', async () => {
    const registry = new Registry();
    const status = jest.fn(() => Promise.resolve(buildStatus()));
    createArchiveMetrics(registry, status);

    expect(await scrape(registry)).toMatchObject({
      archive_enabled: 1,
      archive_last_error_present: 0,
      archive_watermark_timestamp_seconds: Date.parse('2026-01-02T00:00:00Z') / 1000,
      archive_last_cleanup_timestamp_seconds: Date.parse('2026-03-01T00:00:00Z') / 1000,
      archive_storage_used_bytes: 1234,
      archive_storage_limit_bytes: 5000,
      archive_pending_items: 7,
      archive_media_files_pending: 2,
      archive_uploading: 0,
    });
    expect(status).toHaveBeenCalledTimes(1);
  });

  it('when a pass failed and nothing was archived, then last_error is 1 and the watermark 0', async () => {
    const registry = new Registry();
    createArchiveMetrics(registry, () =>
      Promise.resolve(
        buildStatus({ last_error: 'store down', watermark: null, is_uploading: true }),
      ),
    );
    expect(await scrape(registry)).toMatchObject({
      archive_last_error_present: 1,
      archive_watermark_timestamp_seconds: 0,
      archive_uploading: 1,
    });
  });

  it('when the state cannot be read, then the scrape still answers with the last values', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const registry = new Registry();
      let answer: () => Promise<ArchiveStatus> = () => Promise.resolve(buildStatus());
      createArchiveMetrics(registry, () => answer());
      await scrape(registry);
      answer = () => Promise.reject(new Error('state store unreachable'));
      jest.advanceTimersByTime(5000);
      expect(await scrape(registry)).toMatchObject({
        archive_storage_used_bytes: 1234,
        archive_status_read_ok: 0,
      });
    } finally {
      jest.useRealTimers();
    }
  });

  it('when the state store hangs, then the scrape answers within about a second, marks the status not current, and starts no second read', async () => {
    const registry = new Registry();
    let reads = 0;
    createArchiveMetrics(registry, () => {
      reads += 1;
      return new Promise<ArchiveStatus>(() => undefined); // never settles
    });
    const started = Date.now();

    const samples = await scrape(registry);
    const again = await scrape(registry);

    expect(Date.now() - started).toBeLessThan(3000);
    expect(samples.archive_status_read_ok).toBe(0);
    expect(again.archive_status_read_ok).toBe(0);
    expect(reads).toBe(1);
  });

  it('when no pass ran yet, then every pass outcome is counted from 0', async () => {
    const registry = new Registry();
    createArchiveMetrics(registry);
    const samples = await scrape(registry);
    for (const outcome of [
      'done',
      'failed',
      'storage_limit',
      'disabled',
      'interrupted',
      'lease_lost',
      'busy',
    ])
      expect(samples[`archive_passes_total{outcome="${outcome}"}`]).toBe(0);
  });
});

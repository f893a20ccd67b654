/**
 * The audit retention (docs/adr/0019), in both modes: the worker holding the archive lease
 * deletes audit rows older than AUDIT_RETENTION_DAYS, in chunks, with archiving disabled (its
 * default), and leaves the younger rows alone.
 */
import { Registry } from '@screenfleet/runtime';
import type { AuditRow, AuditStore } from '@screenfleet/storage';
import { uniqueName } from '../../../test/services';
import { settings, storesOf, waitUntil, workerFor, type Mode, type Stores } from './support';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** An audit row `ageMs` old, with a unique id. */
function auditRow(ageMs: number): AuditRow {
  return {
    id: uniqueName('audit'),
    at: new Date(Date.now() - ageMs),
    actor: 'tok_0123456789abcdef',
    action: 'operator.press',
    device: 'desk-1',
    outcome: 'ok',
    outcomeCode: null,
    durationMs: 12,
    details: { key: 'Enter' },
  };
}

async function storedIds(audit: AuditStore): Promise<string[]> {
  const page = await audit.query({ limit: 1000 });
  return page.rows.map((row) => row.id).sort();
}

describe.each<Mode>(['distributed', 'embedded'])('audit retention, %s mode', (mode) => {
  let s: Stores;
  const workers: Array<{ stop(): Promise<void> }> = [];

  beforeEach(async () => {
    s = await storesOf(mode);
    await s.audit.ensureSchema();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    await s.close();
  });

  it('when the worker holds the lease with archiving disabled, then the audit rows older than the retention are deleted in chunks, counted, and the younger ones stay', async () => {
    const expired = [
      ...Array.from({ length: 24 }, () => auditRow(200 * DAY_MS)),
      auditRow(90 * DAY_MS + 10 * MINUTE_MS), // just past the retention
    ];
    const young = [
      auditRow(90 * DAY_MS - 10 * MINUTE_MS), // just inside it
      auditRow(30 * DAY_MS),
      auditRow(MINUTE_MS),
    ];
    await s.audit.insertRows([...expired, ...young]);
    const registry = new Registry();

    const worker = workerFor(s, {
      defaults: settings({ enabled: false }),
      audit: s.audit,
      auditRetentionDays: 90,
      auditChunkRows: 10,
      registry,
    });
    workers.push(worker);
    await worker.start();

    const left = await waitUntil(
      () => storedIds(s.audit),
      (ids) => ids.length <= young.length,
    );
    expect(left).toEqual(young.map((row) => row.id).sort());
    const deleted = await registry.getSingleMetric('archive_audit_rows_deleted_total')?.get();
    expect(deleted?.values[0]?.value).toBe(expired.length);
  });
});

import type { AuditStore } from '@screenfleet/storage';
import {
  AUDIT_DELETE_CHUNK_ROWS,
  auditCutoff,
  createAuditRetention,
  deleteExpiredAudit,
} from './audit-retention';

const DAY_MS = 86_400_000;
const NOW = new Date('2026-11-29T10:00:00.000Z');

/** An audit store holding rows at the given times; it records each delete it is asked for. */
function fakeAudit(times: Date[]) {
  let rows = [...times].sort((a, b) => a.getTime() - b.getTime());
  const calls: Array<{ cutoff: Date; limit: number }> = [];
  let failNext: Error | undefined;
  const store: Pick<AuditStore, 'deleteOlderThan'> = {
    deleteOlderThan(cutoff, { limit }) {
      calls.push({ cutoff, limit });
      if (failNext) {
        const error = failNext;
        failNext = undefined;
        return Promise.reject(error);
      }
      const expired = rows.filter((at) => at.getTime() < cutoff.getTime()).slice(0, limit);
      rows = rows.filter((at) => !expired.includes(at));
      return Promise.resolve(expired.length);
    },
  };
  return {
    store,
    calls,
    left: () => rows,
    failOnce: (error: Error) => (failNext = error),
  };
}

const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY_MS);
const rowsAged = (days: number, count: number) =>
  Array.from({ length: count }, () => daysAgo(days));
const always = () => Promise.resolve(true);

describe('audit retention', () => {
  it('when the cutoff is computed, then it is exactly the retention before now (a row that old stays)', () => {
    expect(auditCutoff(NOW, 90)).toEqual(new Date('2026-08-31T10:00:00.000Z'));
    expect(auditCutoff(NOW, 1).getTime()).toBe(NOW.getTime() - DAY_MS);
  });

  it('when more rows expired than a chunk holds, then they are deleted chunk after chunk until one comes back short, and younger rows stay', async () => {
    const audit = fakeAudit([...rowsAged(120, 23), ...rowsAged(90, 1), ...rowsAged(5, 4)]);
    const counted: number[] = [];

    const result = await deleteExpiredAudit(audit.store, auditCutoff(NOW, 90), {
      chunkRows: 10,
      mayContinue: always,
      observer: { rowsDeleted: (count) => counted.push(count) },
    });

    expect(result).toEqual({ deleted: 23, complete: true });
    expect(audit.calls.map((call) => call.limit)).toEqual([10, 10, 10]);
    expect(counted).toEqual([10, 10, 3]);
    expect(audit.left()).toHaveLength(5); // the row exactly 90 days old and the young ones
  });

  it('when a chunk is exactly full, then one more delete is asked to learn that none is left', async () => {
    const audit = fakeAudit(rowsAged(100, 20));

    const result = await deleteExpiredAudit(audit.store, auditCutoff(NOW, 90), {
      chunkRows: 10,
      mayContinue: always,
    });

    expect(result).toEqual({ deleted: 20, complete: true });
    expect(audit.calls).toHaveLength(3);
  });

  it('when the worker may not continue (stopping, lease lost), then no further chunk is deleted and the run is not complete', async () => {
    const audit = fakeAudit(rowsAged(100, 30));
    let allowed = 2;

    const result = await deleteExpiredAudit(audit.store, auditCutoff(NOW, 90), {
      chunkRows: 10,
      mayContinue: () => Promise.resolve(allowed-- > 0),
    });

    expect(result).toEqual({ deleted: 20, complete: false });
    expect(audit.left()).toHaveLength(10);
  });

  it('when the retention runs, then it uses chunks of 1000 by default, runs again only an hour later, and each run cuts at its own now', async () => {
    const audit = fakeAudit([...rowsAged(91, 3), ...rowsAged(89.99, 2)]);
    let now = NOW;
    const retention = createAuditRetention({
      audit: audit.store,
      retentionDays: 90,
      now: () => now,
    });

    expect(await retention.runIfDue(always)).toBe(3);
    expect(audit.calls).toEqual([{ cutoff: auditCutoff(NOW, 90), limit: AUDIT_DELETE_CHUNK_ROWS }]);

    now = new Date(NOW.getTime() + 3_599_999);
    expect(await retention.runIfDue(always)).toBeUndefined();
    expect(audit.calls).toHaveLength(1);

    now = new Date(NOW.getTime() + 3_600_000);
    expect(await retention.runIfDue(always)).toBe(2); // 89.99 days + 1 hour: past 90 days now
    expect(audit.left()).toEqual([]);
  });

  it('when a run fails or is cut short, then it is due again at the next call, not an hour later', async () => {
    const audit = fakeAudit(rowsAged(100, 15));
    const retention = createAuditRetention({
      audit: audit.store,
      retentionDays: 90,
      now: () => NOW,
      chunkRows: 10,
    });

    audit.failOnce(new Error('store unavailable'));
    await expect(retention.runIfDue(always)).rejects.toThrow('store unavailable');
    let allowed = 1; // one chunk, then the worker stops
    expect(await retention.runIfDue(() => Promise.resolve(allowed-- > 0))).toBe(10);
    expect(await retention.runIfDue(always)).toBe(5);
    expect(await retention.runIfDue(always)).toBeUndefined();
  });
});

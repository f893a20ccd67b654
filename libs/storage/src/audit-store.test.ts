import { ValidationError } from '@screenfleet/contracts';
import {
  auditCursor,
  checkAuditRows,
  auditCursorPosition,
  auditPage,
  checkAuditLimit,
  type AuditRow,
} from './audit-store';
import { ContentRejectedError } from './store-error-kinds';

const row = (id: string, ms: number): AuditRow => ({
  id,
  at: new Date(ms),
  actor: 'local',
  action: 'operator.press',
  device: null,
  outcome: 'ok',
  outcomeCode: null,
  durationMs: null,
  details: {},
});

describe('audit cursors', () => {
  it('when a cursor is made from a row, then it names that row position, ids of any text included', () => {
    for (const id of ['aud_1', '', 'a "quoted" id/with+chars', 'é€😀']) {
      const at = new Date('2026-11-29T09:00:00.123Z');
      expect(auditCursorPosition(auditCursor({ at, id }))).toEqual({ atMs: at.getTime(), id });
    }
  });

  it('when a cursor is not one of ours, then it is refused with ValidationError on path cursor', () => {
    const bad = [
      '',
      'not base64 at all!',
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from('[1.5,"x"]').toString('base64url'),
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('[1,"x",3]').toString('base64url'),
    ];
    for (const cursor of bad) {
      let error: unknown;
      try {
        auditCursorPosition(cursor);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).fieldErrors[0]!.path).toBe('cursor');
    }
  });
});

describe('auditPage', () => {
  it('when the adapter read one row past the limit, then the page has limit rows and a cursor after the last', () => {
    const rows = [row('c', 3), row('b', 2), row('a', 1)];
    const page = auditPage(rows, 2);
    expect(page.rows).toEqual(rows.slice(0, 2));
    expect(auditCursorPosition(page.nextCursor!)).toEqual({ atMs: 2, id: 'b' });
  });

  it('when it read at most the limit, then no page follows', () => {
    expect(auditPage([row('a', 1)], 1)).toEqual({ rows: [row('a', 1)], nextCursor: null });
    expect(auditPage([], 10)).toEqual({ rows: [], nextCursor: null });
  });
});

describe('checkAuditLimit', () => {
  it('when the limit is not an integer in range, then RangeError', () => {
    expect(checkAuditLimit(1, 5)).toBe(1);
    expect(checkAuditLimit(5, 5)).toBe(5);
    for (const limit of [0, -1, 6, 1.5, Number.NaN]) {
      expect(() => checkAuditLimit(limit, 5)).toThrow(RangeError);
    }
  });
});

describe('checkAuditRows', () => {
  it('when every row has a valid time and a finite or null duration, then nothing is refused', () => {
    expect(() =>
      checkAuditRows([row('a', 1), { ...row('b', 0), durationMs: 0.5 }, row('c', -5)]),
    ).not.toThrow();
  });

  it('when a row has an invalid time or a duration that is not finite, then the batch is refused naming the row', () => {
    const bad: Array<[AuditRow, RegExp]> = [
      [{ ...row('x', 1), at: new Date(Number.NaN) }, /row x: its at is not a valid date/],
      [{ ...row('y', 1), durationMs: Number.NaN }, /row y: its durationMs NaN/],
      [{ ...row('z', 1), durationMs: Infinity }, /row z: its durationMs Infinity/],
    ];
    for (const [refused, message] of bad) {
      const check = () => checkAuditRows([row('ok', 1), refused]);
      expect(check).toThrow(ContentRejectedError);
      expect(check).toThrow(message);
    }
  });
});

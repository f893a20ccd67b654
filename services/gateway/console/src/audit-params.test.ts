import {
  auditActions as contractActions,
  auditDefaultLimit,
  auditRoute,
} from '@screenfleet/contracts';
import {
  auditActions,
  auditFilterFields,
  auditPageSize,
  detailsText,
  durationText,
  outcomeText,
  readAuditFilters,
  toAuditQuery,
  writeAuditFilters,
} from './audit-params';

describe("the Audit view's parameters", () => {
  it('when the actions are offered, then they are exactly those of the contracts, in order', () => {
    expect([...auditActions]).toEqual([...contractActions]);
  });

  it('when the filters and paging are sent, then each is a parameter GET /audit reads', () => {
    const names = (auditRoute.parameters ?? []).map((p) => p.name);
    for (const field of [...auditFilterFields, 'limit', 'cursor']) expect(names).toContain(field);
    expect(auditPageSize).toBe(auditDefaultLimit);
  });

  it('when the hash holds filters, then they are read trimmed, and an unknown action is dropped', () => {
    const filters = readAuditFilters(
      new URLSearchParams(
        'device=%20desk-17%20&action=operator.press&from=2026-11-29T10:00:00.000Z',
      ),
    );
    expect(filters).toEqual({
      device: 'desk-17',
      token: '',
      action: 'operator.press',
      from: '2026-11-29T10:00:00.000Z',
      to: '',
    });
    expect(readAuditFilters(new URLSearchParams('action=operator.dance')).action).toBe('');
  });

  it('when filters are written, then only those set are; the first page has a limit and no cursor, the next the cursor', () => {
    const filters = { ...readAuditFilters(new URLSearchParams()), token: 'tok_3f9c2a7d41b0e865' };
    expect(writeAuditFilters(filters).toString()).toBe('token=tok_3f9c2a7d41b0e865');
    expect(toAuditQuery(filters).toString()).toBe('token=tok_3f9c2a7d41b0e865&limit=100');
    expect(toAuditQuery(filters, 'c:abc/1=').get('cursor')).toBe('c:abc/1=');
  });
});

describe("an audit row's words", () => {
  it.each([
    [null, ''],
    [0, '0 ms'],
    [84.4, '84 ms'],
    [1234, '1.2 s'],
    [95_400, '95 s'],
  ])('when the duration is %p ms, then "%s"', (ms, text) => {
    expect(durationText(ms)).toBe(text);
  });

  it('when the outcome has a code, then it follows in brackets', () => {
    expect(outcomeText('ok', null)).toBe('ok');
    expect(outcomeText('refused', 'device_not_allowed')).toBe('refused (device_not_allowed)');
  });

  it('when details are shown, then as key=value on one line, lists joined, spaces quoted, nesting as JSON', () => {
    expect(detailsText({ element_index: 12, key: 'a', modifiers: ['ctrl', 'shift'] })).toBe(
      'element_index=12 key=a modifiers=ctrl,shift',
    );
    expect(detailsText({ name: 'lab desktops', devices: null, range: { from: 'a' } })).toBe(
      'name="lab desktops" devices=null range={"from":"a"}',
    );
    expect(detailsText({})).toBe('');
  });

  it('when details run long, then they are cut with an ellipsis', () => {
    const text = detailsText({ text: 'x'.repeat(500) }, 40);
    expect(text).toHaveLength(40);
    expect(text.endsWith('…')).toBe(true);
  });
});

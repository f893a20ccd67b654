import { ValidationError } from './errors';
import { parseAuditQuery } from './audit-query';
import { validators } from './registry';

function fieldErrorsOf(query: Record<string, unknown>): Array<[string, string]> {
  try {
    parseAuditQuery(query);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).fieldErrors.map((e) => [e.path, e.rule]);
  }
  throw new Error('expected a ValidationError');
}

describe('GET /audit query', () => {
  it('when nothing is given, then the newest 100 rows of everything', () => {
    expect(parseAuditQuery({})).toEqual({ limit: 100 });
  });

  it('when every filter is given, then token becomes actor, times become UTC, and the request is a valid audit.request', () => {
    const request = parseAuditQuery({
      device: 'desk-17',
      token: 'tok_3f9c2a7d41b0e865',
      action: 'operator.press',
      from: '2026-11-29T12:00:00+02:00',
      to: '2026-11-29T11:00:00.5Z',
      limit: '1000',
      cursor: 'abc',
      timezone: 'Europe/Berlin',
    });

    expect(request).toEqual({
      device: 'desk-17',
      actor: 'tok_3f9c2a7d41b0e865',
      action: 'operator.press',
      from: '2026-11-29T10:00:00Z',
      to: '2026-11-29T11:00:00.5Z',
      limit: 1000,
      cursor: 'abc',
    });
    expect(validators.auditRequest.check(request)).toEqual([]);
  });

  it('when a value is empty, then it is absent', () => {
    expect(parseAuditQuery({ device: '', limit: '' })).toEqual({ limit: 100 });
  });

  it('when values are bad or repeated, then a 400 names each parameter and rule', () => {
    expect(
      fieldErrorsOf({
        device: 'a\u0001b',
        token: ['a', 'b'],
        action: 'operator.dance',
        from: 'yesterday',
        to: '2026-11-29T10:00:00',
        limit: '1001',
        cursor: 'x'.repeat(513),
      }),
    ).toEqual([
      ['query.device', 'pattern'],
      ['query.token', 'repeated'],
      ['query.action', 'enum'],
      ['query.from', 'format'],
      ['query.to', 'format'],
      ['query.limit', 'maximum'],
      ['query.cursor', 'maxLength'],
    ]);
  });

  it('when limit is 0 or not a number, then a 400 says which rule', () => {
    expect(fieldErrorsOf({ limit: '0' })).toEqual([['query.limit', 'minimum']]);
    expect(fieldErrorsOf({ limit: '1.5' })).toEqual([['query.limit', 'type']]);
  });

  it('when to is not after from, then a 400 on query.to', () => {
    expect(
      fieldErrorsOf({ from: '2026-11-29T10:00:00Z', to: '2026-11-29T12:00:00+02:00' }),
    ).toEqual([['query.to', 'range']]);
  });
});

import { validators, type Envelope } from '@screenfleet/contracts';
import { createLogger } from '@screenfleet/runtime';
import { auditRecordOf, createAuditTrail, outcomeOf, type AuditFact } from './audit-trail';

const buildFact = (overrides: Partial<AuditFact> = {}): AuditFact => ({
  action: 'operator.press',
  actor: 'tok_3f9c2a7d41b0e865',
  device: 'desk-17',
  status: 200,
  code: null,
  seconds: 0.08412,
  details: { element_index: 3, key: 'enter', modifiers: [] },
  requestId: 'req-1',
  ...overrides,
});

describe('audit trail', () => {
  it.each([
    [200, 'ok'],
    [201, 'ok'],
    [400, 'refused'],
    [403, 'refused'],
    [404, 'refused'],
    [500, 'failed'],
    [504, 'failed'],
  ] as const)('when the answer was %s, then the outcome is %s', (status, outcome) => {
    expect(outcomeOf(status)).toBe(outcome);
  });

  it('when a fact is made a record, then it is a valid audit.record whose id is its message id', () => {
    const now = new Date('2026-11-29T10:42:07.312Z');
    const envelope = auditRecordOf(buildFact(), now);

    expect(envelope.type).toBe('audit.record');
    expect(envelope.correlation_id).toBe('req-1');
    expect(envelope.payload).toEqual({
      id: envelope.message_id,
      at: '2026-11-29T10:42:07.312Z',
      actor: 'tok_3f9c2a7d41b0e865',
      action: 'operator.press',
      device: 'desk-17',
      outcome: 'ok',
      outcome_code: null,
      duration_ms: 84.1,
      details: { element_index: 3, key: 'enter', modifiers: [] },
    });
    expect(validators.auditRecord.check(envelope.payload)).toEqual([]);
  });

  it('when a fact was refused, then the record carries the code', () => {
    const { payload } = auditRecordOf(buildFact({ status: 403, code: 'forbidden_device' }));
    expect(payload).toMatchObject({ outcome: 'refused', outcome_code: 'forbidden_device' });
  });

  it('when the broker refuses the record, then it is counted and logged, and record() neither throws nor waits', async () => {
    const failed: string[] = [];
    let rejected!: () => void;
    const published = new Promise<void>((resolve) => (rejected = resolve));
    const trail = createAuditTrail({
      bus: {
        publish: (_exchange: string, _key: string, _envelope: Envelope) => {
          rejected();
          return Promise.reject(new Error('broker down'));
        },
      },
      logger: createLogger({ service: 'test', level: 'silent' }),
      observer: { publishFailed: (action) => failed.push(action) },
    });

    expect(() => trail.record(buildFact())).not.toThrow();
    await published;
    await new Promise((resolve) => setImmediate(resolve));
    expect(failed).toEqual(['operator.press']);
  });
});

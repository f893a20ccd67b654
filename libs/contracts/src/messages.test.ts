import {
  canonicalDateTime,
  createEnvelope,
  isDateTimeWithOffset,
  parseDateTime,
  validators,
} from './index';

const status = {
  enabled: true,
  retention_days: 30,
  watermark: '2026-10-23T00:00:00.000Z',
  last_cleanup: null,
  last_error: null,
  storage_used: 1024,
  storage_limit: 10_737_418_240,
  pending_count: 0,
  is_uploading: false,
  chunks_uploaded: 3,
  media_files_uploaded: 10,
  media_files_pending: 0,
};

describe('archive status, results and envelopes', () => {
  it('when the status has every field, then it is valid', () => {
    expect(validators.archiveStatus.check(status)).toEqual([]);
  });

  it('when a counter is null, then the status is invalid (screenpipe crashes on null numbers)', () => {
    expect(validators.archiveStatus.check({ ...status, pending_count: null })).toEqual([
      { path: 'pending_count', rule: 'type', detail: 'pending_count must be integer' },
    ]);
  });

  it('when a field is missing, then the status is invalid', () => {
    const { chunks_uploaded: _, ...partial } = status;
    expect(validators.archiveStatus.check(partial)).toEqual([
      { path: 'chunks_uploaded', rule: 'required', detail: 'chunks_uploaded is required' },
    ]);
  });

  it('when results and error bodies are built as documented, then they validate', () => {
    expect(validators.operationResult.check({ success: true, message: 'stored 3 items' })).toEqual(
      [],
    );
    expect(
      validators.errorBody.check({
        success: false,
        message: 'invalid add request',
        errors: [{ path: 'device_name', rule: 'required', detail: 'device_name is required' }],
      }),
    ).toEqual([]);
    expect(validators.errorBody.check({ success: true, message: 'x', errors: [] })).not.toEqual([]);
  });

  it('when an envelope is created, then it validates and carries a content batch', () => {
    const envelope = createEnvelope('content.batch', {
      received_at: '2026-11-22T10:00:00.000Z',
      request: {
        device_name: 'd',
        content: { content_type: 'frames', data: [{ file_path: 'a' }] },
      },
    });

    expect(validators.envelope.check(envelope)).toEqual([]);
    expect(validators.contentBatch.check(envelope.payload)).toEqual([]);
    expect(envelope.correlation_id).toBe(envelope.message_id);
    expect(validators.envelope.check({ ...envelope, type: 'other' })).toMatchObject([
      { path: 'type', rule: 'enum' },
    ]);
  });
});

describe('timestamps', () => {
  it.each([
    ['2026-11-22T10:15:30Z', '2026-11-22T10:15:30.000Z'],
    ['2026-11-22T10:15:30.123456Z', '2026-11-22T10:15:30.123Z'],
    ['2026-11-22T18:15:30+08:00', '2026-11-22T10:15:30.000Z'],
    ['2026-11-22T05:15:30.5-05:00', '2026-11-22T10:15:30.500Z'],
    ['2026-11-22t10:15:30z', '2026-11-22T10:15:30.000Z'],
  ])('when %s is parsed, then it is %s in UTC', (input, utc) => {
    expect(parseDateTime(input).toISOString()).toBe(utc);
  });

  it.each([
    ['2026-11-22T10:15:30Z', '2026-11-22T10:15:30Z'],
    ['2026-11-22T10:15:30.000Z', '2026-11-22T10:15:30Z'],
    ['2026-11-22T10:15:30.1234Z', '2026-11-22T10:15:30.1234Z'],
    ['2026-11-22T10:15:30.123456789Z', '2026-11-22T10:15:30.123456789Z'],
    ['2026-11-22T10:15:30.50Z', '2026-11-22T10:15:30.5Z'],
    ['2026-11-22T18:15:30.1235+08:00', '2026-11-22T10:15:30.1235Z'],
    ['2026-01-01T00:30:00.000001+01:00', '2025-12-31T23:30:00.000001Z'],
    ['2026-11-22t10:15:30.9z', '2026-11-22T10:15:30.9Z'],
  ])('when %s is made canonical, then it is %s: UTC, every fraction digit sent', (input, out) => {
    expect(canonicalDateTime(input)).toBe(out);
  });

  it('when two timestamps differ past the millisecond, then their canonical forms differ', () => {
    expect(canonicalDateTime('2026-11-22T10:15:30.1234Z')).not.toBe(
      canonicalDateTime('2026-11-22T10:15:30.1235Z'),
    );
  });

  it.each([
    '2026-11-22',
    '2026-11-22T10:15:30',
    '2026-13-01T00:00:00Z',
    '2027-02-29T00:00:00Z',
    '2026-11-22T10:60:00Z',
    '2026-11-22T10:15:30+24:00',
    'yesterday',
  ])('when %s is checked, then it is refused', (input) => {
    expect(isDateTimeWithOffset(input)).toBe(false);
    expect(() => parseDateTime(input)).toThrow(RangeError);
    expect(() => canonicalDateTime(input)).toThrow(RangeError);
  });
});

describe('archive commands and replies', () => {
  it('when retention_days is below 1 or not an integer, then configure names the field and rule', () => {
    expect(validators.archiveConfigureRequest.check({ retention_days: 0 })).toEqual([
      { path: 'retention_days', rule: 'minimum', detail: 'retention_days must be >= 1' },
    ]);
    expect(validators.archiveConfigureRequest.check({ retention_days: 1.5 })[0]).toMatchObject({
      path: 'retention_days',
      rule: 'type',
    });
  });

  it('when each command is built as the gateway sends it, then it validates', () => {
    for (const command of [
      { action: 'status' },
      { action: 'run' },
      { action: 'configure', request: { enabled: false } },
      { action: 'init', request: { retention_days: 7 } },
      { action: 'restore', request: { from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' } },
    ]) {
      expect(validators.archiveCommand.check(command)).toEqual([]);
    }
    expect(validators.archiveCommand.check({ action: 'delete_everything' })).not.toEqual([]);
  });

  it.each([
    ['ends before it starts', '2026-02-01T00:00:00Z', '2026-01-01T00:00:00Z'],
    ['is empty (from = to, to is exclusive)', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'],
    ['is empty once offsets are applied', '2026-01-01T08:00:00+08:00', '2026-01-01T00:00:00Z'],
  ])('when a restore range %s, then the errors name both from and to', (_, from, to) => {
    const both = [
      { path: 'from', rule: 'range', detail: 'from must be before to (to is exclusive)' },
      { path: 'to', rule: 'range', detail: 'to must be after from (to is exclusive)' },
    ];

    expect(validators.archiveRestoreRequest.check({ from, to })).toEqual(both);
    expect(validators.archiveCommand.check({ action: 'restore', request: { from, to } })).toEqual(
      both.map((error) => ({ ...error, path: `request.${error.path}` })),
    );
    expect(() => validators.archiveRestoreRequest.parse({ from, to })).toThrow(
      'invalid archive restore request: from must be before to (to is exclusive) (and 1 more)',
    );
  });

  it('when a restore range is one millisecond long, then it is valid', () => {
    expect(
      validators.archiveRestoreRequest.check({
        from: '2026-01-01T00:00:00.000Z',
        to: '2026-01-01T00:00:00.001Z',
      }),
    ).toEqual([]);
  });

  it('when a reply carries a status with a null counter, then it is invalid', () => {
    expect(validators.archiveReply.check({ outcome: 'ok', status })).toEqual([]);
    expect(
      validators.archiveReply.check({ outcome: 'refused', code: 'conflict', message: 'x' }),
    ).toEqual([]);
    expect(
      validators.archiveReply.check({ outcome: 'ok', status: { ...status, storage_used: null } }),
    ).not.toEqual([]);
  });
});

it('when an archive command names an unknown action, then the error lists the known ones', () => {
  expect(validators.archiveCommand.check({ action: 'wipe' })).toEqual([
    {
      path: 'action',
      rule: 'enum',
      detail: 'action must be one of: status, run, configure, init, restore, delete',
    },
  ]);
});

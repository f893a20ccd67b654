import { checkMessage, createEnvelope, validators, type Envelope } from './index';

describe('checkMessage', () => {
  it('when the message is the type and version it says, with a valid payload, then no errors', () => {
    const message = createEnvelope('archive.command', { action: 'status' });
    expect(checkMessage(message, 'archive.command', validators.archiveCommand)).toEqual([]);
  });

  it('when the type is another, then one error naming what was expected, payload unread', () => {
    const message = createEnvelope('search.request', { anything: true });
    expect(checkMessage(message, 'archive.command', validators.archiveCommand)).toEqual([
      { path: 'type', rule: 'const', detail: 'not an archive.command v1' },
    ]);
    expect(checkMessage(message, 'content.batch', validators.contentBatch)).toEqual([
      { path: 'type', rule: 'const', detail: 'not a content.batch v1' },
    ]);
  });

  it('when the schema version is another, then the same error', () => {
    const message: Envelope = {
      ...createEnvelope('archive.command', { action: 'status' }),
      schema_version: 2,
    };
    expect(checkMessage(message, 'archive.command', validators.archiveCommand)).toEqual([
      { path: 'type', rule: 'const', detail: 'not an archive.command v1' },
    ]);
  });

  it('when the payload breaks its schema, then the schema errors', () => {
    const message = createEnvelope('archive.command', { action: 'explode' });
    const errors = checkMessage(message, 'archive.command', validators.archiveCommand);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]?.path).toContain('action');
  });
});

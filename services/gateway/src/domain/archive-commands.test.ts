import { AppError, createEnvelope, type Envelope } from '@screenfleet/contracts';
import { sendArchiveCommand } from './archive-commands';
import { toHttpFailure } from '../entry/http-errors';

/** The bus's side is covered against RabbitMQ (test/archive.routes.int.test.ts); this is the mapping. */
const options = () => ({ timeoutMs: 1000, requestId: 'req-1' });

const failureOf = async (call: () => Promise<Envelope>) => {
  const bus = { call: <Res>() => call() as Promise<Envelope<Res>> };
  try {
    await sendArchiveCommand(bus, { action: 'status' }, options());
  } catch (error) {
    return toHttpFailure(error);
  }
  throw new Error('expected a failure');
};

describe('archive worker answers', () => {
  it('when the reply is not an envelope at all, then 502 naming why', async () => {
    const failure = await failureOf(() =>
      Promise.reject(new AppError('operation_failed', 'the reply is not a valid envelope')),
    );
    expect(failure.status).toBe(502);
    expect(failure.body.message).toBe(
      'the archive worker sent an invalid reply: the reply is not a valid envelope',
    );
  });

  it('when the reply has no outcome, then 502 saying outcome is required', async () => {
    const failure = await failureOf(() => Promise.resolve(createEnvelope('archive.reply', {})));
    expect(failure.status).toBe(502);
    expect(failure.body.message).toBe(
      'the archive worker sent an invalid reply: outcome is required',
    );
  });

  it('when an unexpected error escapes the bus, then it stays a 500 (not disguised as a worker fault)', async () => {
    const failure = await failureOf(() => Promise.reject(new Error('boom')));
    expect(failure.status).toBe(500);
  });
});

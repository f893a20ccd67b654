import {
  ValidationError,
  createEnvelope,
  type AuditReply,
  type Envelope,
} from '@screenfleet/contracts';
import type { Bus } from '@screenfleet/bus';
import { readAudit } from './audit-commands';

/** A bus whose one worker answers `reply`, and the requests it was sent. */
function busAnswering(reply: AuditReply) {
  const sent: Envelope[] = [];
  const bus: Pick<Bus, 'call'> = {
    call: <Res>(_queue: string, request: Envelope) => {
      sent.push(request);
      return Promise.resolve(
        createEnvelope('audit.reply', reply, {
          correlationId: request.correlation_id,
        }) as Envelope<Res>,
      );
    },
  };
  return { bus, sent };
}

const options = { timeoutMs: 100, requestId: 'req-3' };

describe('audit commands', () => {
  it('when the worker answers a page, then its rows and cursor are the answer', async () => {
    const { bus, sent } = busAnswering({ outcome: 'ok', rows: [], next_cursor: 'next' });

    expect(await readAudit(bus, { limit: 5, device: 'desk-1' }, options)).toEqual({
      rows: [],
      next_cursor: 'next',
    });
    expect(sent[0]).toMatchObject({
      type: 'audit.request',
      correlation_id: 'req-3',
      payload: { limit: 5, device: 'desk-1' },
    });
  });

  it('when the worker does not know the cursor, then a 400 names query.cursor', async () => {
    const { bus } = busAnswering({ outcome: 'refused', code: 'validation_failed', message: 'bad' });

    const read = readAudit(bus, { limit: 5, cursor: 'forged' }, options);

    await expect(read).rejects.toBeInstanceOf(ValidationError);
    await expect(read).rejects.toMatchObject({
      fieldErrors: [expect.objectContaining({ path: 'query.cursor' })],
    });
  });

  it.each([
    ['store_unavailable', 'store_unavailable'],
    ['failed', 'operation_failed'],
  ] as const)('when the worker refuses with %s, then the client sees %s', async (refusal, code) => {
    const { bus } = busAnswering({ outcome: 'refused', code: refusal, message: 'no' });
    await expect(readAudit(bus, { limit: 1 }, options)).rejects.toMatchObject({ code });
  });
});

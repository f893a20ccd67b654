import type { Request, Response } from 'express';
import { Writable } from 'node:stream';
import { createLogger, createMetrics } from '@screenfleet/runtime';
import { HttpError } from './http-error';
import { createGatewayMetrics } from '../metrics';
import { createOperatorAudit, type OperatorAction } from './operator.routes';

const PRESS = '/experimental/operator/press-key-by-index';

/** The audit on a logger whose lines are kept, and the commands counter as scraped. */
function audit() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const registry = createMetrics();
  const metrics = createGatewayMetrics(registry).operator;
  const { audited, earlyFailures } = createOperatorAudit({
    logger: createLogger({ service: 'test', level: 'info', destination }),
    metrics,
    paths: new Map<string, OperatorAction>([[PRESS, 'press']]),
  });
  const counted = async (result: string) =>
    (await registry.getSingleMetric('gateway_operator_commands_total')?.get())?.values.find(
      (v) => v.labels.action === 'press' && v.labels.result === result,
    )?.value ?? 0;
  return { lines, audited, earlyFailures, counted };
}

const request = (path = PRESS) => ({ path }) as Request;
const response = () => ({ locals: { requestId: 'req-1' } }) as unknown as Response;

describe('operator audit', () => {
  it('when a command succeeds, then one line carries what the handler learned, status 200 and its duration', async () => {
    const { lines, audited, counted } = audit();
    await audited('press', (_req, _res, entry) => {
      Object.assign(entry, { tokenId: 'token-a', device: 'desk-1', key: 'enter' });
      return Promise.resolve();
    })(request(), response());

    expect(lines).toEqual([
      expect.objectContaining({
        audit: 'operator',
        requestId: 'req-1',
        action: 'press',
        tokenId: 'token-a',
        device: 'desk-1',
        key: 'enter',
        status: 200,
        result: 'success',
        durationMs: expect.any(Number) as number,
      }),
    ]);
    expect(await counted('success')).toBe(1);
  });

  it('when the handler refuses the command, then the line has the status and reason and the error goes on', async () => {
    const { lines, audited, counted } = audit();
    const refusal = new HttpError(401, 'unauthorized', 'a bearer token is required');
    const run = audited('press', () => Promise.reject(refusal));

    await expect(run(request(), response())).rejects.toBe(refusal);
    expect(lines).toEqual([
      expect.objectContaining({ tokenId: null, status: 401, result: 'unauthorized' }),
    ]);
    expect(await counted('unauthorized')).toBe(1);
  });

  it('when a request fails before the routes (a wrong method), then an operator path is audited without a token and others are not', async () => {
    const { lines, earlyFailures, counted } = audit();
    const next = jest.fn();
    const wrongMethod = new HttpError(405, 'method_not_allowed', 'GET is not allowed');

    earlyFailures(wrongMethod, request(), response(), next);
    earlyFailures(wrongMethod, request('/add'), response(), next);

    expect(lines).toEqual([
      expect.objectContaining({ action: 'press', tokenId: null, status: 405 }),
    ]);
    expect(lines[0]).not.toHaveProperty('durationMs');
    expect(await counted('method_not_allowed')).toBe(1);
    expect(next.mock.calls).toEqual([[wrongMethod], [wrongMethod]]);
  });
});

import { waitFor, WaitTimeoutError } from './wait-for';

describe('waitFor', () => {
  it('when the condition comes true after a few checks, then it resolves with its value', async () => {
    let checks = 0;
    const value = await waitFor(() => (++checks >= 3 ? `after ${checks}` : undefined), {
      timeoutMs: 1000,
      intervalMs: 1,
      what: 'the third check',
    });
    expect(value).toBe('after 3');
  });

  it('when the condition never holds, then it rejects in time naming what it waited for', async () => {
    const started = Date.now();
    let last = 0;
    await expect(
      waitFor(() => ++last > 1000, {
        timeoutMs: 50,
        intervalMs: 5,
        what: () => `a count of 1000 (last ${last})`,
      }),
    ).rejects.toThrow(/^timed out after 50 ms waiting for a count of 1000 \(last \d+\)$/);
    await expect(waitFor(() => false, { timeoutMs: 1, what: 'x' })).rejects.toBeInstanceOf(
      WaitTimeoutError,
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('when the condition throws, then it rejects at once with that error', async () => {
    let checks = 0;
    await expect(
      waitFor(
        () => {
          checks += 1;
          throw new Error('broken');
        },
        { timeoutMs: 1000, what: 'nothing' },
      ),
    ).rejects.toThrow('broken');
    expect(checks).toBe(1);
  });
});

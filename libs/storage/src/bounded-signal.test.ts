import { createBoundedSignal } from './bounded-signal';

const after = (ms: number) => new Promise((resolve) => setTimeout(() => resolve('later'), ms));

describe('bounded signal', () => {
  it('when it happens, then every caller waiting resolves true', async () => {
    const signal = createBoundedSignal();
    const first = signal.wait(1000);
    const second = signal.wait(Infinity);
    signal.notify();
    expect(await Promise.all([first, second])).toEqual([true, true]);
  });

  it('when it does not happen in time, then the wait resolves false, and a later notify finds no one', async () => {
    const signal = createBoundedSignal();
    expect(await signal.wait(10)).toBe(false);
    signal.notify();
    expect(await Promise.race([signal.wait(50), after(5)])).toBe('later');
  });

  it('when the wait is unbounded, then only a notify ends it', async () => {
    const signal = createBoundedSignal();
    const waiting = signal.wait(Infinity);
    expect(await Promise.race([waiting, after(30)])).toBe('later');
    signal.notify();
    expect(await waiting).toBe(true);
  });
});

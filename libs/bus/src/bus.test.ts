import { ByteGate } from './bus';

describe('ByteGate', () => {
  it('when work fits the budget, then it is admitted at once; beyond it, it waits in order until bytes are released', async () => {
    const gate = new ByteGate(100);
    const admitted: string[] = [];
    await gate.acquire(60);
    void gate.acquire(50).then(() => admitted.push('b'));
    void gate.acquire(10).then(() => admitted.push('c'));
    await Promise.resolve();

    expect(admitted).toEqual([]);
    expect(gate.pressed).toBe(true);
    expect(gate.bytesInProgress).toBe(60);

    gate.release(60);
    await Promise.resolve();
    expect(admitted).toEqual(['b', 'c']);
    expect(gate.bytesInProgress).toBe(60);
    expect(gate.pressed).toBe(false);
  });

  it('when one piece is larger than the whole budget, then it is admitted alone and nothing else with it', async () => {
    const gate = new ByteGate(100);
    await gate.acquire(500);
    let second = false;
    void gate.acquire(1).then(() => (second = true));
    await Promise.resolve();
    expect(second).toBe(false);

    gate.release(500);
    await Promise.resolve();
    expect(second).toBe(true);
  });
});

import { pressWithModifiers, type KeyboardDriver } from './nut.input';

describe('pressWithModifiers', () => {
  const recorder = (failOn?: string) => {
    const log: string[] = [];
    const keyboard: KeyboardDriver = {
      pressKey: (key) => {
        log.push(`down ${key}`);
        return key === failOn ? Promise.reject(new Error('boom')) : Promise.resolve();
      },
      releaseKey: (key) => {
        log.push(`up ${key}`);
        return Promise.resolve();
      },
    };
    return { log, keyboard };
  };

  test('when the press succeeds, then modifiers are released in reverse order', async () => {
    const { log, keyboard } = recorder();
    await pressWithModifiers(keyboard, 'A', ['LeftControl', 'LeftShift']);
    expect(log).toEqual([
      'down LeftControl',
      'down LeftShift',
      'down A',
      'up A',
      'up LeftShift',
      'up LeftControl',
    ]);
  });

  test('when a press fails, then everything pressed so far is released and the error rethrown', async () => {
    const { log, keyboard } = recorder('LeftShift');
    await expect(pressWithModifiers(keyboard, 'A', ['LeftControl', 'LeftShift'])).rejects.toThrow(
      'boom',
    );
    expect(log).toEqual(['down LeftControl', 'down LeftShift', 'up LeftShift', 'up LeftControl']);
  });
});

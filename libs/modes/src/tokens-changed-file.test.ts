import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signalTokensChanged, watchTokensChanged } from './tokens-changed-file';

describe('the tokens-changed file between the tokens CLI and an embedded process', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sf-tokens-changed-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const nextChange = (stop: { current?: () => void }) =>
    new Promise<number>((resolve) => {
      const started = Date.now();
      stop.current = watchTokensChanged(dir, () => resolve(Date.now() - started));
    });

  it('when the CLI signals before the file ever existed, then the watcher hears it', async () => {
    const stop: { current?: () => void } = {};
    const heard = nextChange(stop);
    signalTokensChanged(dir);
    expect(await heard).toBeGreaterThanOrEqual(0);
    stop.current?.();
  });

  it('when the CLI signals again, then the watcher hears that one too', async () => {
    signalTokensChanged(dir);
    const stop: { current?: () => void } = {};
    const heard = nextChange(stop);
    // A new mtime: file systems with a coarse clock need the write to land in a later tick.
    await new Promise((resolve) => setTimeout(resolve, 20));
    signalTokensChanged(dir);
    expect(await heard).toBeGreaterThanOrEqual(0);
    stop.current?.();
  });
});

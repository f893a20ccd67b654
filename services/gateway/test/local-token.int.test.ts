import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadOrCreateLocalToken, localTokenBanner } from '@screenfleet/gateway';
import { isolatedBroker } from '../../../test/services';
import { startService } from '../../../test/support/processes';

describe('the local token file', () => {
  let dataDir: string;
  let file: string;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sf-token-'));
    file = path.join(dataDir, 'gateway-token');
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('when there is none, then one is made 0600 and marked new; the next start reuses it, not new', () => {
    const first = loadOrCreateLocalToken(dataDir);
    const again = loadOrCreateLocalToken(dataDir);

    expect(first.created).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.entry.token);
    expect(again).toEqual({ ...first, created: false });
    expect(localTokenBanner(first)).toContain(first.entry.token);
  });

  it.each([0o644, 0o640, 0o604, 0o660])(
    'when the file is readable by others (mode %o), then start-up is refused naming the file and chmod 600',
    (mode) => {
      writeFileSync(file, 'sf_0123456789abcdef0123456789abcdef\n');
      chmodSync(file, mode);
      expect(() => loadOrCreateLocalToken(dataDir)).toThrow(
        `${file} is readable by other users (mode ${mode.toString(8)}): run chmod 600 ${file}, or delete it to get a new token`,
      );
    },
  );

  it.each(['', '\n', '   \n'])(
    'when the file is empty (%j), then a new token is made, 0600, and shown as new',
    (content) => {
      writeFileSync(file, content);
      chmodSync(file, 0o644);
      const local = loadOrCreateLocalToken(dataDir);

      expect(local.created).toBe(true);
      expect(local.entry.token).toMatch(/^sf_[\w-]{32}$/);
      expect(readFileSync(file, 'utf8').trim()).toBe(local.entry.token);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    },
  );

  it.each(['short', 'two words in a token file'])(
    'when the file holds no valid token (%j), then start-up is refused',
    (content) => {
      writeFileSync(file, content, { mode: 0o600 });
      expect(() => loadOrCreateLocalToken(dataDir)).toThrow(/does not hold a valid token/);
    },
  );
});

describe('the gateway process and its local token', () => {
  let broker: { url: string; remove(): Promise<void> };
  let dataDir: string;
  beforeAll(async () => {
    broker = await isolatedBroker();
  });
  afterAll(async () => broker?.remove());
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sf-token-main-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  /** Runs the built gateway main until it listens (or exits); returns what it wrote. */
  async function runGateway() {
    const gateway = startService('gateway', {
      RABBITMQ_URL: broker.url,
      DATA_DIR: dataDir,
      GATEWAY_PORT: '0',
      GATEWAY_OPS_PORT: '0',
      LOG_LEVEL: 'debug',
    });
    let stdout = '';
    let stderr = '';
    gateway.child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    gateway.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => gateway.child.once('exit', resolve));
    const listening = gateway.waitForLog(/gateway listening/).then(
      () => undefined,
      () => undefined,
    );
    await Promise.race([listening, exited]);
    const code = await gateway.stop();
    return { stdout, stderr, code };
  }

  it('when the token is generated, then it is printed once to the terminal and never logged', async () => {
    const first = await runGateway();
    const token = readFileSync(path.join(dataDir, 'gateway-token'), 'utf8').trim();
    const second = await runGateway();

    expect(first.stderr).toContain(token);
    expect(first.stdout).not.toContain(token);
    expect(first.stdout).toContain('gateway-token');
    expect(second.stderr).not.toContain(token);
    expect(second.stdout).not.toContain(token);
  });

  it('when the token file is world-readable, then the gateway does not start and says how to fix it', async () => {
    const file = path.join(dataDir, 'gateway-token');
    writeFileSync(file, 'sf_0123456789abcdef0123456789abcdef\n');
    chmodSync(file, 0o644);
    const run = await runGateway();

    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`run chmod 600 ${file}`);
    expect(run.stdout).not.toContain('sf_0123456789abcdef0123456789abcdef');
  });
});

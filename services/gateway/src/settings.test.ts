import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger, loadConfig, withoutServerVars } from '@screenfleet/runtime';
import { gatewayConfigSpec } from './config';
import { gatewaySettings } from './settings';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger({ service: 'test', level: 'warn', destination }), lines };
}

const spec = withoutServerVars(gatewayConfigSpec);

describe('gatewaySettings', () => {
  it('when a signing key is set, then commands are signed and the timeouts come from the config', () => {
    const pem = generateKeyPairSync('ed25519')
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const { logger, lines } = capture();
    const settings = gatewaySettings(
      loadConfig(spec, {
        GATEWAY_OPERATOR_SIGNING_KEY: pem,
        GATEWAY_OPERATOR_TIMEOUT: '6s',
        GATEWAY_SEARCH_TIMEOUT: '7s',
        GATEWAY_ARCHIVE_TIMEOUT: '8s',
        GATEWAY_ARCHIVE_RESTORE_TIMEOUT: '9s',
        CAPTURE_STALL_AFTER: '10m',
        GATEWAY_HEALTH_ALLOWED_HOSTS: 'Fleet.Example, health.internal',
      }),
      logger,
    );
    expect(settings.operator?.signingKey?.asymmetricKeyType).toBe('ed25519');
    expect(settings).toMatchObject({
      operator: { timeoutMs: 6000 },
      search: { timeoutMs: 7000 },
      devices: { stallAfterMs: 600_000, healthAllowedHosts: ['fleet.example', 'health.internal'] },
      archive: { timeoutMs: 8000, restoreTimeoutMs: 9000 },
    });
    expect(lines).toEqual([]);
  });

  it('when no signing key is set, then commands go unsigned and it says so', () => {
    const { logger, lines } = capture();
    const settings = gatewaySettings(loadConfig(spec, {}), logger);
    expect(settings.operator?.signingKey).toBeUndefined();
    expect(lines.join('')).toContain('GATEWAY_OPERATOR_SIGNING_KEY is not set');
  });
});

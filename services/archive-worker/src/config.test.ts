import { ConfigError, loadConfig } from '@screenfleet/runtime';
import { archiveConfigSpec, parseEncryptionKeys } from './config';

const hex = (byte: string) => byte.repeat(32);
const keysFrom = (env: Record<string, string>) =>
  parseEncryptionKeys(
    loadConfig(archiveConfigSpec, { MONGODB_URL: 'mongodb://x', RABBITMQ_URL: 'amqp://x', ...env }),
  );

describe('archive encryption keys', () => {
  it('when ARCHIVE_ENCRYPTION_KEYS lists keys (hex or base64), then they come newest first, the same key once', () => {
    const b64 = Buffer.from(hex('22'), 'hex').toString('base64');

    const keys = keysFrom({ ARCHIVE_ENCRYPTION_KEYS: `${hex('11')}, ${b64},${hex('11')}` });

    expect(keys.map((key) => key.toString('hex'))).toEqual([hex('11'), hex('22')]);
  });

  it('when only ARCHIVE_ENCRYPTION_KEY is set (before rotation), then it is the one key; neither: none', () => {
    expect(keysFrom({ ARCHIVE_ENCRYPTION_KEY: hex('33') }).map((k) => k.toString('hex'))).toEqual([
      hex('33'),
    ]);
    expect(keysFrom({})).toEqual([]);
  });

  it('when both are set, or a key is not 32 bytes, then a ConfigError names the variable and never the key', () => {
    const both = () =>
      keysFrom({ ARCHIVE_ENCRYPTION_KEYS: hex('11'), ARCHIVE_ENCRYPTION_KEY: hex('22') });
    expect(both).toThrow(ConfigError);
    expect(both).toThrow(
      /ARCHIVE_ENCRYPTION_KEY=\*\*\* \(unset it when ARCHIVE_ENCRYPTION_KEYS is set/,
    );

    const short = () => keysFrom({ ARCHIVE_ENCRYPTION_KEYS: `${hex('11')},abcd` });
    expect(short).toThrow(/ARCHIVE_ENCRYPTION_KEYS=\*\*\* \(32 bytes each: .* \(key 2 of 2\)\)/);
    expect(() => short()).not.toThrow(/abcd|1111/);
  });
});

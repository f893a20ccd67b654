import { ConfigError, loadConfig, withoutServerVars } from '@screenfleet/runtime';
import { archiveConfigSpec } from './config';
import { archiveWorkerSettings } from './settings';

const spec = withoutServerVars(archiveConfigSpec);

describe('archiveWorkerSettings', () => {
  it('when the ARCHIVE_* variables are set, then the worker gets them, its holder id starting with the name given', () => {
    const settings = archiveWorkerSettings(
      loadConfig(spec, {
        ARCHIVE_ENABLED: 'true',
        ARCHIVE_RETENTION_DAYS: '7',
        ARCHIVE_CHUNK_SIZE: '10',
        ARCHIVE_ENCRYPTION_KEY: 'ab'.repeat(32),
      }),
      'embedded',
    );
    expect(settings).toMatchObject({
      defaults: { enabled: true, retention_days: 7 },
      chunkSize: 10,
      allowUnreadable: false,
    });
    expect(settings.holderId).toMatch(new RegExp(`^embedded@.+:${process.pid}$`));
    expect(settings.keyring?.writer).toBeDefined();
    expect(settings.media).toBeUndefined();
  });

  it('when a rule across variables is broken, then a ConfigError names it', () => {
    const config = loadConfig(spec, { ARCHIVE_STORE: 's3' });
    expect(() => archiveWorkerSettings(config, 'archive-worker')).toThrow(ConfigError);
    expect(() => archiveWorkerSettings(config, 'archive-worker')).toThrow(
      'S3_BUCKET=<unset> (required when ARCHIVE_STORE=s3)',
    );
  });
});

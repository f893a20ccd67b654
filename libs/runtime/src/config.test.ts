import {
  ConfigError,
  defineConfig,
  loadConfig,
  renderConfigMarkdown,
  withoutDefault,
} from './config';

const spec = defineConfig({
  name: { env: 'APP_NAME', kind: 'string', default: 'fleet', doc: 'Display name' },
  port: { env: 'APP_PORT', kind: 'integer', min: 0, max: 65535, default: 8080, doc: 'HTTP port' },
  ratio: { env: 'APP_RATIO', kind: 'number', min: 0, max: 1, default: 0.5, doc: 'Sample ratio' },
  verbose: { env: 'APP_VERBOSE', kind: 'boolean', default: false, doc: 'More output' },
  logLevel: {
    env: 'LOG_LEVEL',
    kind: 'enum',
    values: ['info', 'debug'],
    default: 'info',
    doc: 'Log level',
  },
  brokerUrl: {
    env: 'RABBITMQ_URL',
    kind: 'url',
    protocols: ['amqp', 'amqps'],
    optional: true,
    secret: true,
    doc: 'Broker URL; embedded mode when unset',
  },
  timeoutMs: { env: 'APP_TIMEOUT', kind: 'duration', default: 30_000, doc: 'Request timeout' },
  tags: { env: 'APP_TAGS', kind: 'list', default: ['a', 'b'], doc: 'Default tags' },
  dataDir: { env: 'DATA_DIR', kind: 'string', doc: 'Where files go' },
});

const required = { DATA_DIR: '/data' };

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('when only required variables are set, then every other key has its default', () => {
    const config = loadConfig(spec, required);
    expect(config).toEqual({
      name: 'fleet',
      port: 8080,
      ratio: 0.5,
      verbose: false,
      logLevel: 'info',
      brokerUrl: undefined,
      timeoutMs: 30_000,
      tags: ['a', 'b'],
      dataDir: '/data',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('when every kind is set, then each is parsed to its type', () => {
    const config = loadConfig(spec, {
      ...required,
      APP_NAME: ' spaced ',
      APP_PORT: '0',
      APP_RATIO: '.25',
      APP_VERBOSE: 'YES',
      LOG_LEVEL: 'debug',
      RABBITMQ_URL: 'amqps://u:p@broker:5671/vhost',
      APP_TIMEOUT: '1.5s',
      APP_TAGS: ' x, ,y ,',
    });
    expect(config).toEqual({
      name: ' spaced ',
      port: 0,
      ratio: 0.25,
      verbose: true,
      logLevel: 'debug',
      brokerUrl: 'amqps://u:p@broker:5671/vhost',
      timeoutMs: 1500,
      tags: ['x', 'y'],
      dataDir: '/data',
    });
    expect(Object.isFrozen(config.tags)).toBe(true);
  });

  it.each([
    ['true', true],
    ['false', false],
    ['1', true],
    ['0', false],
    ['yes', true],
    ['no', false],
    ['True', true],
  ])('when a boolean is %s, then it is %s', (raw, expected) => {
    expect(loadConfig(spec, { ...required, APP_VERBOSE: raw }).verbose).toBe(expected);
  });

  it.each([
    ['250', 250],
    ['250ms', 250],
    ['2s', 2000],
    ['5m', 300_000],
    ['1h', 3_600_000],
  ])('when a duration is %s, then it is %d ms', (raw, expected) => {
    expect(loadConfig(spec, { ...required, APP_TIMEOUT: raw }).timeoutMs).toBe(expected);
  });

  it('when a duration is below its minimum, then it is refused with the minimum named', () => {
    const bounded = defineConfig({
      wait: { env: 'APP_WAIT', kind: 'duration', min: 500, default: 5000, doc: 'Wait' },
    });
    expect(loadConfig(bounded, { APP_WAIT: '0.5s' }).wait).toBe(500);
    expect(configError(() => loadConfig(bounded, { APP_WAIT: '100ms' })).message).toContain(
      'APP_WAIT=100ms (duration: milliseconds, or a number with unit ms/s/m/h such as 30s; at least 500 ms)',
    );
  });

  it('when a variable is blank, then it counts as unset', () => {
    expect(loadConfig(spec, { ...required, APP_PORT: '  ' }).port).toBe(8080);
    expect(configError(() => loadConfig(spec, { DATA_DIR: '' })).message).toContain(
      'DATA_DIR=<unset> (required)',
    );
  });

  it('when many variables are bad, then one ConfigError lists each with its value and rule', () => {
    const err = configError(() =>
      loadConfig(spec, {
        APP_PORT: '80.5',
        APP_RATIO: '2',
        APP_VERBOSE: 'maybe',
        LOG_LEVEL: 'loud',
        RABBITMQ_URL: 'http://user:hunter2@broker',
        APP_TIMEOUT: '10 minutes',
      }),
    );
    expect(err.message.split('\n')).toEqual([
      'invalid configuration (7 variables):',
      'APP_PORT=80.5 (integer from 0 to 65535)',
      'APP_RATIO=2 (number from 0 to 1)',
      'APP_VERBOSE=maybe (boolean: true/false/1/0/yes/no)',
      'LOG_LEVEL=loud (one of: info, debug)',
      'RABBITMQ_URL=*** (URL with scheme amqp or amqps)',
      'APP_TIMEOUT=10 minutes (duration: milliseconds, or a number with unit ms/s/m/h such as 30s)',
      'DATA_DIR=<unset> (required)',
    ]);
    expect(err.issues.map((issue) => issue.env)).toEqual([
      'APP_PORT',
      'APP_RATIO',
      'APP_VERBOSE',
      'LOG_LEVEL',
      'RABBITMQ_URL',
      'APP_TIMEOUT',
      'DATA_DIR',
    ]);
    expect(err.code).toBe('config_invalid');
    expect(err.message).not.toContain('hunter2');
  });

  it.each(['abc', '1e3', '65536', '-1', '0x10', '99999999999999999999'])(
    'when an integer is %s, then it is rejected',
    (raw) => {
      expect(
        configError(() => loadConfig(spec, { ...required, APP_PORT: raw })).issues,
      ).toHaveLength(1);
    },
  );

  it('when a URL has no scheme, then it is rejected', () => {
    const err = configError(() => loadConfig(spec, { ...required, RABBITMQ_URL: 'broker:5672' }));
    expect(err.issues[0]?.rule).toBe('URL with scheme amqp or amqps');
  });

  describe('a list of URLs (the nodes of one cluster)', () => {
    const nodes = defineConfig({
      rabbitmqUrl: {
        env: 'RABBITMQ_URL',
        kind: 'urls',
        protocols: ['amqp', 'amqps'],
        secret: true,
        doc: 'Broker nodes',
      },
    });
    const issue = (raw: string) =>
      configError(() => loadConfig(nodes, { RABBITMQ_URL: raw })).message.split('\n')[1];

    it('when one URL is given, then it is a list of one (a single node keeps working)', () => {
      expect(loadConfig(nodes, { RABBITMQ_URL: 'amqp://u:p@a:5672/v' }).rabbitmqUrl).toEqual([
        'amqp://u:p@a:5672/v',
      ]);
    });

    it('when several are given, then they are kept in order, trimmed, blanks dropped', () => {
      const config = loadConfig(nodes, {
        RABBITMQ_URL: ' amqp://u:p@a:5672/v, amqps://u:p@b:5671/v ,,amqp://c/v',
      });
      expect(config.rabbitmqUrl).toEqual([
        'amqp://u:p@a:5672/v',
        'amqps://u:p@b:5671/v',
        'amqp://c/v',
      ]);
      expect(Object.isFrozen(config.rabbitmqUrl)).toBe(true);
    });

    it('when one item is not an amqp URL, then one line names the variable and the item by position, never the password', () => {
      expect(issue('amqp://u:hunter2@a/v,http://u:hunter2@b/v,amqp://c/v')).toBe(
        'RABBITMQ_URL=*** (comma-separated URLs, each with scheme amqp or amqps; item 2 of 3 is not)',
      );
      expect(issue('amqp://a/v,b:5672')).toBe(
        'RABBITMQ_URL=*** (comma-separated URLs, each with scheme amqp or amqps; item 2 of 2 is not)',
      );
    });

    it('when only commas are given, then it is refused as none given', () => {
      expect(issue(' , ,')).toBe(
        'RABBITMQ_URL=*** (comma-separated URLs, each with scheme amqp or amqps; none given)',
      );
    });
  });

  it('infers each key type from the spec, so callers need no casts', () => {
    const config = loadConfig(spec, required);
    const level: 'info' | 'debug' = config.logLevel;
    const port: number = config.port;
    const tags: readonly string[] = config.tags;
    // @ts-expect-error an optional variable may be undefined
    const url: string = config.brokerUrl;
    expect([level, port, tags, url]).toHaveLength(4);
  });
});

describe('defineConfig', () => {
  it('when a default breaks its own rule, then the spec is refused', () => {
    expect(() =>
      defineConfig({ port: { env: 'PORT', kind: 'integer', max: 10, default: 11, doc: 'x' } }),
    ).toThrow('config spec port: default 11 breaks its rule (integer <= 10)');
    expect(() =>
      defineConfig({
        mode: { env: 'MODE', kind: 'enum', values: ['a'], default: 'b', doc: 'x' },
      }),
    ).toThrow('config spec mode');
  });

  it('when two keys share an env name, then the spec is refused', () => {
    expect(() =>
      defineConfig({
        a: { env: 'SAME', kind: 'string', doc: 'x' },
        b: { env: 'SAME', kind: 'string', doc: 'y' },
      }),
    ).toThrow('used twice');
  });
});

describe('renderConfigMarkdown', () => {
  it('renders one row per variable with its default and doc', () => {
    expect(renderConfigMarkdown(spec).split('\n')).toEqual([
      '| Variable | Default | Description |',
      '| --- | --- | --- |',
      '| `APP_NAME` | `fleet` | Display name |',
      '| `APP_PORT` | `8080` | HTTP port (integer from 0 to 65535) |',
      '| `APP_RATIO` | `0.5` | Sample ratio (number from 0 to 1) |',
      '| `APP_VERBOSE` | `false` | More output (boolean: true/false/1/0/yes/no) |',
      '| `LOG_LEVEL` | `info` | Log level (one of: info, debug) |',
      '| `RABBITMQ_URL` | _unset_ | Broker URL; embedded mode when unset (URL with scheme amqp or amqps) |',
      '| `APP_TIMEOUT` | `30000` | Request timeout (duration: milliseconds, or a number with unit ms/s/m/h such as 30s) |',
      '| `APP_TAGS` | `a,b` | Default tags (comma-separated list) |',
      '| `DATA_DIR` | **required** | Where files go |',
      '',
    ]);
  });
});

describe('withoutDefault', () => {
  const dir = { env: 'ARCHIVE_DIR', kind: 'string', default: 'data/archive', doc: 'dir' } as const;

  it('when the variable is unset, then the value is undefined, not the default; when set, its value', () => {
    const spec = defineConfig({ dir: withoutDefault(dir) });
    expect(loadConfig(spec, {}).dir).toBeUndefined();
    expect(loadConfig(spec, { ARCHIVE_DIR: ' ' }).dir).toBeUndefined();
    expect(loadConfig(spec, { ARCHIVE_DIR: '/srv/archive' }).dir).toBe('/srv/archive');
    expect(renderConfigMarkdown(spec)).toContain('| `ARCHIVE_DIR` | _unset_ | dir |');
  });
});

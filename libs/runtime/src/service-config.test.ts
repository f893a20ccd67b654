import { defineConfig, loadConfig } from './config';
import { SERVER_VARS, serviceConfigSpec, withoutServerVars } from './service-config';

describe('serviceConfigSpec', () => {
  const spec = defineConfig({ ...serviceConfigSpec('INGEST', 9465) });

  it('when only the broker is given, then the ops server is on loopback and /metrics has no token', () => {
    const config = loadConfig(spec, { RABBITMQ_URL: 'amqp://127.0.0.1' });
    expect(config).toEqual({
      rabbitmqUrl: ['amqp://127.0.0.1'],
      rabbitmqUrlOrder: 'shuffled',
      opsPort: 9465,
      opsHost: '127.0.0.1',
      metricsToken: undefined,
      logLevel: 'info',
      shutdownTimeout: 15000,
    });
  });

  it("when the service's prefixed variables and METRICS_TOKEN are set, then they are used", () => {
    const config = loadConfig(spec, {
      RABBITMQ_URL: 'amqp://127.0.0.1',
      INGEST_OPS_PORT: '0',
      INGEST_OPS_HOST: '0.0.0.0',
      METRICS_TOKEN: 'scrape-secret',
    });
    expect(config).toMatchObject({ opsPort: 0, opsHost: '0.0.0.0', metricsToken: 'scrape-secret' });
  });

  it('when the nodes of a cluster are listed with an order, then both are read', () => {
    const config = loadConfig(spec, {
      RABBITMQ_URL: 'amqp://a:5672,amqp://b:5672',
      RABBITMQ_URL_ORDER: 'listed',
    });
    expect(config).toMatchObject({
      rabbitmqUrl: ['amqp://a:5672', 'amqp://b:5672'],
      rabbitmqUrlOrder: 'listed',
    });
  });

  it('when the broker URL is missing, then start-up fails naming it', () => {
    expect(() => loadConfig(spec, {})).toThrow('RABBITMQ_URL=<unset> (required)');
  });
});

describe('withoutServerVars', () => {
  it('when the embedded mode reads a spec, then the server variables are neither read nor required', () => {
    const spec = defineConfig({
      ...serviceConfigSpec('INGEST', 9465),
      mongodbUrl: { env: 'MONGODB_URL', kind: 'url', doc: 'store' },
      database: { env: 'MONGODB_DATABASE', kind: 'string', default: 'sf', doc: 'db' },
      connectionName: { env: 'INGEST_CONNECTION_NAME', kind: 'string', default: 'i', doc: 'n' },
      prefetch: { env: 'INGEST_PREFETCH', kind: 'integer', default: 32, doc: 'prefetch' },
    });
    const config = loadConfig(withoutServerVars(spec), { INGEST_PREFETCH: '8' });
    expect(Object.keys(config).sort()).toEqual(
      ['logLevel', 'metricsToken', 'opsHost', 'opsPort', 'prefetch', 'shutdownTimeout'].sort(),
    );
    expect(config.prefetch).toBe(8);
    expect(Object.keys(spec)).toEqual(expect.arrayContaining([...SERVER_VARS]));
  });
});

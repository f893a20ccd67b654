/**
 * docker-compose.yml and the Dockerfile, checked without a Docker engine (docs/deploy.md):
 * the file is valid against the Compose Specification's JSON Schema (the compose-spec
 * repository's schema/compose-spec.json, as the npm package dclint ships it in
 * schemas/compose.schema.json), every service is buildable or pulled, configured, health-checked,
 * non-root and published on loopback only, and the Prometheus config it hands to Prometheus
 * passes `promtool check config` together with ops/prometheus's rules. Needs no server; it is
 * in the integration tier because the unit tier only collects tests beside the code.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Ajv from 'ajv';
import { parse } from 'yaml';

const root = path.join(__dirname, '..');

interface Service {
  image?: string;
  build?: string | { context?: string; target?: string };
  user?: string;
  environment?: Record<string, unknown> | string[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
  ports?: (string | number | { published?: string | number; host_ip?: string })[];
  network_mode?: string;
  volumes?: (string | { type?: string; source?: string; target?: string; read_only?: boolean })[];
  configs?: (string | { source: string; target?: string })[];
}
interface Compose {
  services: Record<string, Service>;
  configs?: Record<string, { content?: string }>;
}

/** Compose resolves YAML merge keys (`<<: *anchor`), so the checks read the file the same way. */
function readCompose(): Compose {
  return parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), {
    merge: true,
  }) as Compose;
}

function composeSchemaValidator() {
  const dclintDir = path.dirname(require.resolve('dclint/package.json'));
  const schema = JSON.parse(
    readFileSync(path.join(dclintDir, 'schemas', 'compose.schema.json'), 'utf8'),
  ) as Record<string, unknown>;
  // The schema says draft-07 as "https://json-schema.org/draft-07/schema", an id Ajv knows
  // without the https and with a "#"; the keywords are draft-07's, so drop the pointer.
  delete schema.$schema;
  // strict: false because the schema uses annotations Ajv does not know (`deprecated`).
  return new Ajv({ allErrors: true, strict: false }).compile(schema);
}

/** The `FROM <image> AS <name>` stages of the Dockerfile, by name. */
function dockerfileStages(dockerfile: string): Map<string, string> {
  const stages = new Map<string, string>();
  let current: string | undefined;
  for (const line of dockerfile.split('\n')) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?\s*$/i.exec(line.trim());
    if (from) {
      current = from[1]?.toLowerCase() ?? `#${stages.size}`;
      stages.set(current, '');
    } else if (current !== undefined) {
      stages.set(current, `${stages.get(current)}${line}\n`);
    }
  }
  return stages;
}

function hostIpOf(port: Service['ports'] extends (infer P)[] | undefined ? P : never): string {
  if (typeof port === 'number') return '';
  if (typeof port === 'object') return port.host_ip ?? '';
  // [host_ip:][published:]target[/protocol]; an IPv6 host_ip is in brackets.
  const parts = port.replace(/\/\w+$/, '').match(/^(\[[^\]]+\]|[^:]+):([^:]+):([^:]+)$/);
  return parts?.[1] ?? '';
}

function promtool(args: string[], cwd: string): Promise<{ code: number | string; output: string }> {
  return new Promise((resolve) => {
    execFile('promtool', args, { cwd }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      if (!error) return resolve({ code: 0, output });
      if (error.code === 'ENOENT') {
        return resolve({ code: 'ENOENT', output: 'promtool not found: Debian package prometheus' });
      }
      resolve({ code: error.code ?? 'failed', output });
    });
  });
}

describe('docker-compose.yml', () => {
  const compose = readCompose();
  const services = Object.entries(compose.services);
  const stages = dockerfileStages(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));

  it('when validated against the Compose Specification schema, then it has no error', () => {
    const validate = composeSchemaValidator();
    const valid = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('when a service is broken, then the schema reports it (the check is not vacuous)', () => {
    const validate = composeSchemaValidator();
    const broken = readCompose();
    const gateway = broken.services.gateway as unknown as Record<string, unknown>;
    gateway.helthcheck = { test: ['CMD', 'true'] };
    gateway.ports = [{ published: 3030, host_ip: '127.0.0.1', hostip: 'typo' }];
    expect(validate(broken)).toBe(false);
    const paths = (validate.errors ?? []).map((e) => e.instancePath);
    expect(paths).toEqual(
      expect.arrayContaining(['/services/gateway', '/services/gateway/ports/0']),
    );
  });

  it('runs the stack the deployment needs', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      [
        'archive-worker',
        'gateway',
        'ingest-worker',
        'minio',
        'mongodb',
        'prometheus',
        'rabbitmq',
      ].sort(),
    );
  });

  it.each(services)(
    'when %s is read, then it is pulled or built from a Dockerfile stage',
    (_, service) => {
      if (service.build === undefined) {
        expect(service.image).toEqual(expect.any(String));
        return;
      }
      // Without a target Docker builds the last stage, whatever service that is.
      const target = typeof service.build === 'string' ? undefined : service.build.target;
      expect(target).toEqual(expect.any(String));
      expect([...stages.keys()]).toContain(target);
      expect(stages.get(target ?? '')).toMatch(/^CMD \[/m);
    },
  );

  it.each(services)('when %s is read, then it has an environment', (_, service) => {
    const environment = service.environment ?? {};
    expect(Object.keys(environment).length).toBeGreaterThan(0);
  });

  it.each(services)('when %s is read, then it has a healthcheck', (_, service) => {
    expect(service.healthcheck?.disable).not.toBe(true);
    expect(service.healthcheck?.test).toBeDefined();
    expect(service.healthcheck?.test).not.toEqual(['NONE']);
  });

  it.each(services)('when %s is read, then it runs as a non-root user', (_, service) => {
    const user = service.user ?? '';
    expect(user).not.toBe('');
    expect(user.split(':')[0]).not.toMatch(/^(root|0)$/);
  });

  it.each(services)(
    'when %s publishes ports, then only on loopback and not on the host network',
    (_, service) => {
      expect(service.network_mode).not.toBe('host');
      for (const port of service.ports ?? []) {
        expect({ port, hostIp: hostIpOf(port) }).toEqual({
          port,
          hostIp: expect.stringMatching(/^(127\.0\.0\.1|\[::1\])$/),
        });
      }
    },
  );

  it('when the Dockerfile is read, then its runtime is multi-stage, --omit=dev and non-root', () => {
    expect(stages.size).toBeGreaterThan(1);
    const runtime = stages.get('runtime') ?? '';
    expect(runtime).toMatch(/npm ci --omit=dev/);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/COPY --from=build/);
  });

  it('when Prometheus starts, then it gets ops/prometheus read-only and scrapes each Node service', async () => {
    expect(compose.services.prometheus?.volumes).toContain(
      './ops/prometheus:/etc/prometheus/screenfleet:ro',
    );
    const content = compose.configs?.['prometheus-compose']?.content ?? '';
    const config = parse(content) as {
      scrape_configs: { job_name: string; dns_sd_configs?: { names: string[]; port: number }[] }[];
    };

    // Every built service is a job of its own name, scraped on the port its healthcheck uses.
    for (const [name, service] of services.filter(([, s]) => s.build !== undefined)) {
      const healthPort = /127\.0\.0\.1:(\d+)\/readyz/.exec(JSON.stringify(service.healthcheck));
      const job = config.scrape_configs.find((j) => j.job_name === name);
      expect({ name, sd: job?.dns_sd_configs }).toEqual({
        name,
        sd: [expect.objectContaining({ names: [name], port: Number(healthPort?.[1]) })],
      });
    }

    // promtool reads the config as the container sees it: rules beside it under screenfleet/.
    const dir = mkdtempSync(path.join(tmpdir(), 'compose-prometheus-'));
    try {
      writeFileSync(path.join(dir, 'compose.yml'), content.replaceAll('${METRICS_TOKEN:-}', ''));
      symlinkSync(path.join(root, 'ops', 'prometheus'), path.join(dir, 'screenfleet'));
      const result = await promtool(['check', 'config', 'compose.yml'], dir);
      expect(result).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

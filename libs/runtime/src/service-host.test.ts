import { EventEmitter } from 'node:events';
import net from 'node:net';
import { defineConfig } from './config';
import { serviceConfigSpec } from './service-config';
import { hostProcess, readinessOf, runService, StopSteps } from './service-host';

const spec = defineConfig({ ...serviceConfigSpec('TEST', 0) });
const env = { RABBITMQ_URL: 'amqp://127.0.0.1', LOG_LEVEL: 'silent', TEST_OPS_PORT: '0' };

/** Resolves with the code the host exits with. */
function exitCode(): { exit: (code: number) => void; code: Promise<number> } {
  let exit: (code: number) => void = () => undefined;
  const code = new Promise<number>((resolve) => (exit = resolve));
  return { exit, code };
}

describe('StopSteps', () => {
  it('when steps were added, then they come back last added first', () => {
    const steps = new StopSteps();
    steps.add('close the store', () => Promise.resolve());
    steps.add('close the broker', () => Promise.resolve());
    steps.add('stop intake', () => Promise.resolve());
    expect(steps.inStopOrder().map((step) => step.name)).toEqual([
      'stop intake',
      'close the broker',
      'close the store',
    ]);
  });
});

describe('runService', () => {
  it('when started, then the ops server answers with the service readiness, and a signal runs the stop steps in reverse order with the ops server last', async () => {
    const order: string[] = [];
    const source = new EventEmitter();
    const { exit, code } = exitCode();
    let opsPort = 0;
    let opsOpenAtLastStep = false;
    await runService(
      'test',
      spec,
      ({ config, onStop }) => {
        expect(config.opsPort).toBe(0);
        onStop('close the store', async () => {
          order.push('close the store');
          opsOpenAtLastStep = (await fetch(`http://127.0.0.1:${opsPort}/healthz`)).ok;
        });
        onStop('close the broker', () => Promise.resolve(void order.push('close the broker')));
        onStop('stop intake', () => Promise.resolve(void order.push('stop intake')));
        return Promise.resolve({
          readiness: () => readinessOf({ broker: false }),
          announce: (ops) => (opsPort = ops.port),
        });
      },
      { env, exit, source },
    );
    const ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ ready: false, checks: { broker: 'down' } });

    source.emit('SIGTERM');
    expect(await code).toBe(0);
    expect(order).toEqual(['stop intake', 'close the broker', 'close the store']);
    expect(opsOpenAtLastStep).toBe(true);
    await expect(fetch(`http://127.0.0.1:${opsPort}/healthz`)).rejects.toThrow();
  });

  it('when a variable is bad, then it exits 1 before the service starts', async () => {
    const { exit, code } = exitCode();
    const start = jest.fn();
    const writes: string[] = [];
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((text) => {
      writes.push(String(text));
      return true;
    });
    try {
      await runService('test', spec, start, { env: { ...env, TEST_OPS_PORT: 'x' }, exit });
    } finally {
      write.mockRestore();
    }
    expect(await code).toBe(1);
    expect(start).not.toHaveBeenCalled();
    expect(writes.join('')).toContain('TEST_OPS_PORT=x');
  });

  it('accepts only a spec with the variables the host reads (serviceConfigSpec)', () => {
    const bare = defineConfig({ name: { env: 'NAME', kind: 'string', doc: 'a name' } });
    const call = () =>
      runService(
        'test',
        // @ts-expect-error no LOG_LEVEL, ops address or shutdown limit
        bare,
        () => Promise.resolve({ readiness: () => readinessOf({}) }),
      );
    expect(typeof call).toBe('function');
  });
});

describe('hostProcess', () => {
  const config = {
    logLevel: 'silent',
    opsPort: 0,
    opsHost: '127.0.0.1',
    metricsToken: undefined,
    shutdownTimeout: 1000,
  } as const;

  it('when several parts start in one host, then one stop order runs them all, last started first', async () => {
    const order: string[] = [];
    const source = new EventEmitter();
    const { exit, code } = exitCode();
    const startPart = (name: string, onStop: (name: string, run: () => Promise<void>) => void) =>
      onStop(name, () => Promise.resolve(void order.push(name)));
    await hostProcess({ name: 'test', config, exit, source }, ({ onStop }) => {
      startPart('stop the first service', onStop);
      startPart('stop the second service', onStop);
      return Promise.resolve({ readiness: () => readinessOf({}) });
    });
    source.emit('SIGINT');
    expect(await code).toBe(0);
    expect(order).toEqual(['stop the second service', 'stop the first service']);
  });

  it('when the start fails after a part started, then that part stops (last started first) and the start rejects with the error', async () => {
    const order: string[] = [];
    const failure = new Error('gateway port in use');
    const started = hostProcess({ name: 'test', config }, ({ onStop }) => {
      onStop('close the store', () => Promise.resolve(void order.push('close the store')));
      onStop('stop the worker', () => Promise.resolve(void order.push('stop the worker')));
      return Promise.reject(failure);
    });
    await expect(started).rejects.toBe(failure);
    expect(order).toEqual(['stop the worker', 'close the store']);
  });

  it('when the ops server cannot listen, then the started parts stop and the start rejects', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    const order: string[] = [];
    try {
      const started = hostProcess(
        { name: 'test', config: { ...config, opsPort: port } },
        (host) => {
          host.onStop('stop the worker', () => Promise.resolve(void order.push('stop the worker')));
          return Promise.resolve({ readiness: () => readinessOf({}) });
        },
      );
      await expect(started).rejects.toThrow();
      expect(order).toEqual(['stop the worker']);
    } finally {
      taken.close();
    }
  });

  it('when the start fails, then it rejects with that error and serves nothing', async () => {
    const failure = new Error('no store');
    await expect(hostProcess({ name: 'test', config }, () => Promise.reject(failure))).rejects.toBe(
      failure,
    );
  });
});

describe('readinessOf', () => {
  it('when every check is up, then ready; a string is down with its reason', () => {
    expect(readinessOf({ broker: true })).toEqual({ ready: true, checks: { broker: 'up' } });
    expect(readinessOf({ broker: true, desktop: 'no DISPLAY' })).toEqual({
      ready: false,
      checks: { broker: 'up', desktop: 'down: no DISPLAY' },
    });
  });
});

import { Writable } from 'node:stream';
import { ConfigError } from './config';
import { createLogger } from './logger';
import { runMain } from './run-main';

function sink(lines: string[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
}

describe('runMain', () => {
  it('when start succeeds, then it does not exit', async () => {
    const exit = jest.fn();
    await runMain(() => Promise.resolve(), { service: 'svc', exit });
    expect(exit).not.toHaveBeenCalled();
  });

  it('when start fails, then it logs one fatal line and exits 1', async () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 'svc', level: 'info', destination: sink(lines) });
    const exit = jest.fn();
    await runMain(() => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5672')), {
      service: 'svc',
      logger,
      exit,
    });
    expect(exit).toHaveBeenCalledWith(1);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      level: 'fatal',
      service: 'svc',
      msg: 'start failed: connect ECONNREFUSED 127.0.0.1:5672',
      err: { type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:5672' },
    });
  });

  it('when config is invalid, then it prints the readable list and exits 1', async () => {
    const written: string[] = [];
    const exit = jest.fn();
    const error = new ConfigError([
      { env: 'PORT', value: 'abc', rule: 'integer' },
      { env: 'DATA_DIR', value: undefined, rule: 'required' },
    ]);
    await runMain(() => Promise.reject(error), {
      service: 'gateway',
      writeError: (text) => written.push(text),
      exit,
    });
    expect(exit).toHaveBeenCalledWith(1);
    expect(written).toEqual([
      'gateway: invalid configuration (2 variables):\nPORT=abc (integer)\nDATA_DIR=<unset> (required)\n',
    ]);
  });
});

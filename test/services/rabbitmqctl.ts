import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Runs rabbitmqctl on the broker's host: locally (as root on our machines), or inside the
 * RabbitMQ container when the test services run under testcontainers.
 */
export async function rabbitmqctl(args: string[], container = process.env.TEST_RABBITMQ_CONTAINER) {
  const [file, argv] = container
    ? ['docker', ['exec', container, 'rabbitmqctl', ...args]]
    : ['rabbitmqctl', args];
  const { stdout } = await run(file, argv, { timeout: 30_000 });
  return stdout;
}

/**
 * The broker-side pids of the connections whose client named itself `name`, to close later with
 * `rabbitmqctl close_connection` at a precise moment (listing takes a second or two).
 */
export async function brokerConnectionPids(name: string): Promise<string[]> {
  // The JSON formatter prints pids as #PID<...>, which close_connection does not take; the
  // tab-separated form prints <rabbit@host...> pids and client properties as Erlang terms.
  const out = await rabbitmqctl([
    'list_connections',
    'pid',
    'client_properties',
    '-q',
    '--no-table-headers',
  ]);
  const marker = `{"connection_name",${JSON.stringify(name)}}`;
  return out
    .split('\n')
    .filter((line) => line.includes(marker))
    .map((line) => line.split('\t')[0] ?? '');
}

/** Closes, from the server side, every connection whose client named itself `name`. */
export async function closeBrokerConnections(name: string): Promise<number> {
  const pids = await brokerConnectionPids(name);
  for (const pid of pids) {
    await rabbitmqctl(['close_connection', pid, 'closed by a test']);
  }
  return pids.length;
}

/**
 * Messages the broker delivered to the connections whose client named itself `name` and that
 * are not acked yet, over all their channels: the broker's own view, for waiting until a
 * consumer in another process has acked what it got.
 */
export async function unackedMessages(name: string): Promise<number> {
  const pids = new Set(await brokerConnectionPids(name));
  if (pids.size === 0) throw new Error(`no broker connection is named "${name}"`);
  const out = await rabbitmqctl([
    'list_channels',
    'connection',
    'messages_unacknowledged',
    '-q',
    '--no-table-headers',
  ]);
  return out
    .split('\n')
    .map((line) => line.split('\t'))
    .filter(([pid]) => pids.has(pid ?? ''))
    .reduce((sum, [, unacked]) => sum + Number(unacked), 0);
}

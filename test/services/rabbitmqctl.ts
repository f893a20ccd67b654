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

interface ConnectionRow {
  pid: string;
  client_properties: Array<[string, string, unknown]> | Record<string, unknown>;
}

function connectionName(row: ConnectionRow): unknown {
  const props = row.client_properties;
  if (Array.isArray(props)) return props.find(([key]) => key === 'connection_name')?.[2];
  return props.connection_name;
}

/** Closes, from the server side, every connection whose client named itself `name`. */
export async function closeBrokerConnections(name: string): Promise<number> {
  const out = await rabbitmqctl(['list_connections', 'pid', 'client_properties', '--formatter', 'json', '-q']);
  const rows = JSON.parse(out) as ConnectionRow[];
  const matching = rows.filter((row) => connectionName(row) === name);
  for (const row of matching) {
    await rabbitmqctl(['close_connection', row.pid, 'closed by a test']);
  }
  return matching.length;
}

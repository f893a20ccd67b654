/**
 * bench:archive's RPC floor, run as its own process as the archive worker is: answers every
 * request on the queue named by argv[3] (declared with the JSON arguments of argv[5]) with its
 * own payload, `prefetch` (argv[4]) at a time, through the RabbitMQ at argv[2]. Prints "ready"
 * once it serves; ends on SIGTERM.
 */
import { createAmqpBus } from '@screenfleet/bus';
import { createEnvelope, topology } from '@screenfleet/contracts';
import { createLogger } from '@screenfleet/runtime';

async function main(): Promise<void> {
  const [url, queue, prefetch, queueArguments] = process.argv.slice(2);
  if (!url || !queue || !prefetch || !queueArguments) {
    throw new Error('usage: archive-echo <amqp url> <queue> <prefetch> <queue arguments JSON>');
  }
  const bus = await createAmqpBus({
    url,
    topology: {
      ...topology,
      queues: [
        ...topology.queues,
        { name: queue, arguments: JSON.parse(queueArguments) as Record<string, unknown> },
      ],
    },
    connectionName: 'bench-archive-rpc-echo',
    logger: createLogger({ service: 'bench', level: 'silent' }),
  });
  await bus.serve(
    queue,
    (request) =>
      Promise.resolve(
        createEnvelope('archive.reply', request.payload, {
          correlationId: request.correlation_id,
        }),
      ),
    { prefetch: Number(prefetch) },
  );
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void bus.close().finally(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

/**
 * `npm run services`: starts the same test services the integration tests use and prints the
 * URLs to export, then keeps them up until Ctrl-C.
 */
import { startTestServices } from './start';

async function main(): Promise<void> {
  const services = await startTestServices((line) => console.error(line));
  console.log(`export RABBITMQ_URL='${services.rabbitmqUrl}'`);
  console.log(`export MONGODB_URL='${services.mongodbUrl}'`);
  console.error('Test services are up; Ctrl-C stops them and removes their data.');
  const stop = () => {
    services.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // The servers run as detached children: keep this process alive until a signal comes.
  setInterval(() => undefined, 1 << 30);
}

main().catch((error: unknown) => {
  console.error(`npm run services: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

/**
 * `npm run services`: starts the same test services the integration tests use and prints the
 * URLs and S3 settings to export, then keeps them up until Ctrl-C.
 */
import { startTestServices } from './start';

async function main(): Promise<void> {
  const services = await startTestServices((line) => console.error(line));
  console.log(`export RABBITMQ_URL='${services.rabbitmqUrl}'`);
  console.log(`export MONGODB_URL='${services.mongodbUrl}'`);
  const { s3 } = services;
  console.log(`export S3_ENDPOINT='${s3.endpoint}'`);
  console.log(`export S3_REGION='${s3.region}'`);
  console.log(`export S3_ACCESS_KEY='${s3.accessKey}'`);
  console.log(`export S3_SECRET_KEY='${s3.secretKey}'`);
  console.log(`export S3_FORCE_PATH_STYLE='${String(s3.forcePathStyle)}'`);
  if (s3.bucket) console.log(`export S3_BUCKET='${s3.bucket}'`);
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

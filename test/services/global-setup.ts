import { startTestServices, type TestServices } from './start';

declare global {
  var testServices: TestServices | undefined;
}

/** Jest runs this once before the integration tests; test workers inherit the env it sets. */
export default async function globalSetup(): Promise<void> {
  const services = await startTestServices((line) => process.stdout.write(`\n${line}\n`));
  Object.assign(process.env, services.env);
  globalThis.testServices = services;
}

/**
 * The load generator of bench:ingest, run as its own process so it does not share a CPU queue
 * with the gateway: posts `batches` batches of `size` items with `concurrency` in flight,
 * optionally paced to `rate` batches/s, and prints the POST /add latencies (of 200s) and the
 * count of each status as one JSON line.
 */
import { buildBatch } from '../test/support/content';

async function main(): Promise<void> {
  const [url, token, device, batches, size, concurrency, rate] = process.argv.slice(2);
  const total = Number(batches);
  const items = Number(size);
  const interval = Number(rate) > 0 ? 1000 / Number(rate) : 0;
  const bodies = Array.from({ length: total }, (_, i) =>
    JSON.stringify(buildBatch(device!, i * items, items)),
  );
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const started = performance.now();
  let next = 0;
  const deadline = Date.now() + 120_000;

  async function lane(): Promise<void> {
    for (let i = next++; i < total && Date.now() < deadline; i = next++) {
      if (interval) {
        const due = started + i * interval;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      const sent = performance.now();
      const response = await fetch(`${url}/add`, {
        method: 'POST',
        // An empty token: none sent (a gateway serving loopback clients without one).
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: bodies[i],
      });
      await response.arrayBuffer();
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      if (response.status === 200) latencies.push(performance.now() - sent);
    }
  }
  await Promise.all(Array.from({ length: Number(concurrency) }, lane));
  process.stdout.write(
    `${JSON.stringify({ latencies, statuses, seconds: (performance.now() - started) / 1000 })}\n`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

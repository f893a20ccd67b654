import { buildBatch } from './content';
import { post } from './gateway';

export interface LoadReport {
  batches: number;
  /**
   * Answers other than 200 that the client retried (503 during an outage, 500 outcome_unknown,
   * connection errors).
   */
  retries: number;
}

/**
 * Posts `batches` batches of `size` items like a careful producer: each one until it gets a
 * 200, re-sending after a short pause what the API says may be re-sent: a 503 (nothing was
 * stored), a 500 `outcome_unknown` (the broker connection went while the gateway waited for its
 * confirm: the batch may be stored, and re-sending never stores an item twice, ADR 0005) and a
 * connection error. Any other answer fails the load. At most `concurrency` in flight.
 */
export async function sendBatches(
  url: string,
  options: {
    device: string;
    batches: number;
    size: number;
    concurrency?: number;
    onAccepted?: (n: number) => void;
  },
): Promise<LoadReport> {
  const report: LoadReport = { batches: 0, retries: 0 };
  let next = 0;
  const deadline = Date.now() + 120_000;
  async function lane() {
    for (let i = next++; i < options.batches; i = next++) {
      const batch = buildBatch(options.device, i * options.size, options.size);
      for (;;) {
        if (Date.now() > deadline) throw new Error('load did not finish within 120 s');
        const { status, code } = await post(`${url}/add`, batch).then(
          (response) => ({
            status: response.status,
            code: typeof response.body.code === 'string' ? response.body.code : undefined,
          }),
          () => ({ status: 0, code: undefined }),
        );
        if (status === 200) break;
        const resend = status === 503 || status === 0 || code === 'outcome_unknown';
        if (!resend) throw new Error(`batch ${i} answered ${status} ${code ?? ''}`);
        report.retries += 1;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      report.batches += 1;
      options.onAccepted?.(report.batches);
    }
  }
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, lane));
  return report;
}

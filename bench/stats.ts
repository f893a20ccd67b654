/** Percentiles of a sample, nearest-rank, rounded to 0.1 ms. */
export function percentiles(samples: number[], ranks: number[]): Record<string, number> {
  const sorted = [...samples].sort((a, b) => a - b);
  return Object.fromEntries(
    ranks.map((rank) => {
      const index = Math.min(
        sorted.length - 1,
        Math.max(0, Math.ceil((rank / 100) * sorted.length) - 1),
      );
      return [`p${rank}`, Math.round((sorted[index] ?? NaN) * 10) / 10];
    }),
  );
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] ?? NaN)
    : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

/**
 * One scrape of an ops server's /metrics: a sample's value by its name and labels as the text
 * writes them (`name` or `name{label="value"}`), undefined when it is not there.
 */
export async function scrapeMetrics(
  opsUrl: string,
): Promise<(sample: string) => number | undefined> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return (sample) => values.get(sample);
}

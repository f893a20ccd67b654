/**
 * AMQP topic matching, as RabbitMQ does it: words are separated by dots, `*` stands for exactly
 * one word and `#` for zero or more (so `content.#` matches `content` and `content.frames.x`).
 */
export function topicMatches(pattern: string, routingKey: string): boolean {
  const wanted = pattern.split('.');
  const words = routingKey.split('.');
  // (pattern word, key word) pairs already answered: `#` would otherwise retry them many times.
  const known = new Map<number, boolean>();
  const matchFrom = (p: number, k: number): boolean => {
    if (p === wanted.length) return k === words.length;
    const key = p * (words.length + 1) + k;
    const cached = known.get(key);
    if (cached !== undefined) return cached;
    const word = wanted[p];
    const result =
      word === '#'
        ? matchFrom(p + 1, k) || (k < words.length && matchFrom(p, k + 1))
        : k < words.length && (word === '*' || word === words[k]) && matchFrom(p + 1, k + 1);
    known.set(key, result);
    return result;
  };
  return matchFrom(0, 0);
}

/**
 * Geometry of the console's charts, plain SVG (ADR 0010): the bars of a timeline (Device view)
 * and the segments of one stacked bar (a Fleet row). Numbers only, no DOM: unit-tested.
 */

export interface Bar {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * One bar per value across `width`, bottom-aligned in `height`, scaled to the largest value
 * (at least 1, so an empty series draws no bars rather than dividing by zero). A value above
 * zero gets at least one unit of height: a quiet hour with one item is still visible.
 */
export function timelineBars(
  values: readonly number[],
  width: number,
  height: number,
  gap = 1,
): Bar[] {
  if (values.length === 0) return [];
  const max = Math.max(1, ...values);
  const step = width / values.length;
  const barWidth = Math.max(0.5, step - gap);
  return values.map((value, i) => {
    const h = value > 0 ? Math.max(1, (value / max) * height) : 0;
    return { x: round(i * step), y: round(height - h), width: round(barWidth), height: round(h) };
  });
}

export interface Segment {
  key: string;
  x: number;
  width: number;
}

/**
 * Segments of one horizontal bar of `width` for the parts (content types), laid end to end and
 * scaled so that `max` fills the width; zero parts are left out.
 */
export function stackedSegments(
  parts: ReadonlyArray<{ key: string; value: number }>,
  max: number,
  width: number,
): Segment[] {
  const scale = max > 0 ? width / max : 0;
  const segments: Segment[] = [];
  let x = 0;
  for (const { key, value } of parts) {
    if (value <= 0) continue;
    const w = Math.min(width - x, value * scale);
    segments.push({ key, x: round(x), width: round(w) });
    x += w;
  }
  return segments;
}

const round = (n: number) => Math.round(n * 100) / 100;

import { h } from './vendor/preact.js';
import { stackedSegments, timelineBars } from './chart.js';
import { formatCount } from './format.js';

/**
 * The console's charts as plain SVG (ADR 0010). Each is an image with a text alternative that
 * says what it shows; a timeline's bars each carry a <title> (hover, and assistive technology
 * that walks the image), and the numbers are also written beside the charts.
 */

export interface TimelinePoint {
  label: string;
  items: number;
}

const items = (n: number) => `${formatCount(n)} ${n === 1 ? 'item' : 'items'}`;

/** Bars of items per hour or per day, oldest first; labels under the first, middle and last. */
export function TimelineChart({
  points,
  label,
}: {
  points: readonly TimelinePoint[];
  label: string;
}) {
  const width = 600;
  const height = 120;
  const axis = 18;
  const bars = timelineBars(
    points.map((p) => p.items),
    width,
    height,
    2,
  );
  const total = points.reduce((sum, p) => sum + p.items, 0);
  const most = Math.max(0, ...points.map((p) => p.items));
  const ticks = [0, Math.floor(points.length / 2), points.length - 1].filter(
    (i, n, all) => i >= 0 && all.indexOf(i) === n,
  );
  return (
    <svg
      class="timeline"
      viewBox={`0 0 ${width} ${height + axis}`}
      role="img"
      aria-label={`${label}: ${items(total)} in all, at most ${items(most)} in one bar`}
    >
      <line class="baseline" x1={0} x2={width} y1={height + 0.5} y2={height + 0.5} />
      {bars.map((bar, i) => (
        <rect key={i} x={bar.x} y={bar.y} width={bar.width} height={bar.height}>
          <title>{`${points[i]!.label}: ${items(points[i]!.items)}`}</title>
        </rect>
      ))}
      {ticks.map((i) => (
        <text
          key={i}
          x={(bars[i]?.x ?? 0) + (bars[i]?.width ?? 0) / 2}
          y={height + axis - 4}
          text-anchor={i === 0 ? 'start' : i === points.length - 1 ? 'end' : 'middle'}
        >
          {points[i]!.label}
        </text>
      ))}
    </svg>
  );
}

/** The content types' names as people read them; others as the API names them. */
const typeLabels: Record<string, string> = { frames: 'screen', transcription: 'audio' };
export const contentTypeLabel = (type: string) => typeLabels[type] ?? type;

/**
 * A fleet row's last 24 hours: one bar, as long as the device's items against the fleet's
 * busiest device, split by content type. (Per-hour bars for each row would need GET
 * /devices/{name} for every device; the Device view draws those.) HTML, not SVG, unlike the
 * timelines: 1,000 rows of SVG elements and their attributes were the costliest part of the
 * fleet's render. The widths are set through the DOM (a style property), which the page's
 * policy allows, unlike a style attribute in markup. A plain function (not a component): it is
 * called for every fleet row.
 */
export function day24Bar(parts: ReadonlyArray<{ key: string; value: number }>, max: number) {
  const total = parts.reduce((sum, p) => sum + p.value, 0);
  const described = parts
    .filter((p) => p.value > 0)
    .map((p) => `${formatCount(p.value)} ${contentTypeLabel(p.key)}`)
    .join(', ');
  // One element, its parts as hard stops of a gradient: two fewer nodes in each of 1,000 rows.
  const stops = stackedSegments(parts, max, 100).map(
    (s) => `${partColour(s.key)} ${s.x}% ${s.x + s.width}%`,
  );
  return (
    <span
      class="day-bar"
      role="img"
      aria-label={`${items(total)} in the last 24 hours${described ? `: ${described}` : ''}`}
      style={
        stops.length > 0
          ? { backgroundImage: `linear-gradient(90deg, ${stops.join(', ')}, transparent 0)` }
          : undefined
      }
    />
  );
}

/** A content type's colour in the bar (the stylesheet's custom properties). */
const partColour = (type: string) =>
  type === 'transcription' ? 'var(--part-audio)' : 'var(--part-screen)';

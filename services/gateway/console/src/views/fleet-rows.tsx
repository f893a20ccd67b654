import type { DeviceSummary } from '@screenfleet/contracts';
import { h } from '../vendor/preact.js';
import { useLayoutEffect, useRef, useState } from '../vendor/hooks.js';
import { day24Bar } from '../charts.js';
import { agentLabels, archiveShare, captureLabels } from '../fleet.js';
import { formatAgo, formatCount, formatShare } from '../format.js';
import { hashFor } from '../route.js';
import { rowRange, rowsToRender, sameRange, type RowRange } from '../row-window.js';

/**
 * The fleet's rows as an ARIA table, windowed (ADR 0010): only the rows on screen and a step
 * either side are in the DOM; padding of the others' height keeps the table, the page and its
 * scrollbar as long as all rows would make them. The table tells assistive technology its whole
 * size (aria-rowcount) and each row its place in it (aria-rowindex). Every row has the one
 * height the stylesheet gives (`--fleet-row`), so where a row is needs no measuring of rows.
 */
export function FleetRows({
  devices,
  max,
  now,
  onRendered,
}: {
  devices: readonly DeviceSummary[];
  max: number;
  now: Date;
  /** After each render that put these devices' rows in the DOM, before the frame is painted. */
  onRendered?: () => void;
}) {
  const body = useRef<HTMLDivElement>(null);
  const { start, end, placed } = useRowWindow(devices.length, body);
  /** The device whose row holds the focus: rendered wherever the page scrolls to. */
  const [focused, setFocused] = useState<string>();
  useLayoutEffect(() => {
    if (placed) onRendered?.();
  }, [devices, start, end, placed]);
  const focusedIndex =
    focused === undefined ? -1 : devices.findIndex((d) => d.device_name === focused);
  const ranges = rowsToRender({ start, end }, focusedIndex, devices.length);
  const first = ranges[0]!;
  const last = ranges[ranges.length - 1]!;
  return (
    <div class="fleet" role="table" aria-label="Devices" aria-rowcount={devices.length + 1}>
      <div role="rowgroup">
        <div class="row head" role="row" aria-rowindex={1}>
          <span role="columnheader">Device</span>
          <span role="columnheader">Capture</span>
          <span role="columnheader">Agent</span>
          <span role="columnheader">Last 24 hours</span>
          <span role="columnheader">Archived</span>
        </div>
      </div>
      <div
        role="rowgroup"
        class="rows"
        ref={body}
        style={{ '--rows-before': first.start, '--rows-after': devices.length - last.end }}
        onFocusIn={(event) =>
          setFocused(
            (event.target as Element).closest('[data-device]')?.getAttribute('data-device') ??
              undefined,
          )
        }
        onFocusOut={(event) => {
          // To elsewhere on the page; not when the window or the page loses the focus (null).
          const to = event.relatedTarget as Node | null;
          if (to && !event.currentTarget.contains(to)) setFocused(undefined);
        }}
      >
        {ranges.map((range, r) => {
          // Between two ranges, the rows not rendered: a margin of their height.
          const gap = r === 0 && ranges.length > 1 ? ranges[1]!.start - range.end : 0;
          return devices
            .slice(range.start, range.end)
            .map((device, i) =>
              fleetRow(
                device,
                range.start + i,
                max,
                now,
                i === range.end - range.start - 1 ? gap : 0,
              ),
            );
        })}
      </div>
    </div>
  );
}

/**
 * The rows to render for where the list (`body`, `count` rows) is on the screen now, again as
 * the page scrolls or resizes and when the count changes (a filter). A row's height is the
 * list's height over its count (padding and rows add up to that whatever the range), so the
 * first render has no rows: the list is measured, then its rows rendered, before the frame is
 * painted (a layout effect's update is rendered at once), and no row is made only to go.
 */
function useRowWindow(
  count: number,
  body: { current: HTMLElement | null },
): RowRange & { placed: boolean } {
  const [range, setRange] = useState({ start: 0, end: 0, placed: false });
  useLayoutEffect(() => {
    const place = () => {
      const list = body.current;
      if (!list) return;
      const box = list.getBoundingClientRect();
      const rowHeight = count > 0 ? box.height / count : 0;
      const next = rowRange({ count, rowHeight, top: box.top, viewport: innerHeight });
      setRange((shown) =>
        shown.placed && sameRange(shown, next) ? shown : { ...next, placed: true },
      );
    };
    place();
    addEventListener('scroll', place, { passive: true });
    addEventListener('resize', place, { passive: true });
    return () => {
      removeEventListener('scroll', place);
      removeEventListener('resize', place);
    };
  }, [count]);
  return range;
}

/**
 * " 3 minutes ago" (one text node, its space included), or `none`. The local time is on the
 * Device view: formatting it for every row would cost the render more than anything else in a
 * row.
 */
const ago = (iso: string | null, now: Date, none: string): string =>
  ` ${iso === null ? none : formatAgo(new Date(iso), now)}`;

/**
 * One device's row (`index` in the filtered list), `gapAfter` rows not rendered after it. A
 * plain function, not a component, and no separator nodes: each component or node in a row is
 * paid for every row rendered.
 */
function fleetRow(device: DeviceSummary, index: number, max: number, now: Date, gapAfter: number) {
  const { capture, agent } = device;
  const share = archiveShare(device);
  const byType = Object.entries(capture.by_content_type).map(([key, t]) => ({
    key,
    value: t.items_last_24h,
  }));
  const parts = byType.length > 0 ? byType : [{ key: 'all', value: capture.items_last_24h }];
  return (
    <div
      class="row"
      role="row"
      key={device.device_name}
      aria-rowindex={index + 2}
      data-device={device.device_name}
      style={gapAfter > 0 ? { '--rows-gap': gapAfter } : undefined}
    >
      <span role="rowheader">
        <a href={hashFor('devices', [device.device_name])}>{device.device_name}</a>
      </span>
      <span role="cell">
        <span class={`badge capture-${device.capture_status}`}>
          {captureLabels[device.capture_status]}
        </span>
        {ago(capture.last_item_time, now, 'no items')}
      </span>
      <span role="cell">
        <span class={`badge agent-${agent.status}`}>{agentLabels[agent.status]}</span>
        {ago(agent.last_heartbeat_time, now, 'never seen')}
      </span>
      <span role="cell" class="day">
        {day24Bar(parts, max)}
        {` ${formatCount(capture.items_last_24h)}`}
      </span>
      <span role="cell" class="share">
        {share === undefined ? '—' : formatShare(share)}
      </span>
    </div>
  );
}

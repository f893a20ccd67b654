import type { DeviceSummary } from '@screenfleet/contracts';
import { Fragment, h } from '../vendor/preact.js';
import { useEffect, useLayoutEffect, useRef, useState } from '../vendor/hooks.js';
import { day24Bar } from '../charts.js';
import {
  agentCounts,
  agentLabels,
  agentStatuses,
  archiveShare,
  busiest24h,
  captureCounts,
  captureLabels,
  captureStatuses,
  filterDevices,
  readFleetFilter,
  writeFleetFilter,
  type FleetFilter,
} from '../fleet.js';
import { fetchFleet } from '../fleet-fetch.js';
import { formatAgo, formatCount, formatShare } from '../format.js';
import { hashFor } from '../route.js';
import { ErrorNote, useNow } from '../ui.js';
import type { ViewProps } from '../views.js';

/** How often the fleet is asked again (one request at a time, planned when it answers). */
const pollMs = 15_000;

/** Names of the Performance API entries the render bench reads (bench/console.ts). */
export const fleetRenderMarks = {
  data: 'fleet:data',
  /** From the data's arrival to the rows in the DOM. */
  committed: 'fleet:committed',
  /** From the data's arrival to the frame after it (style, layout and paint included). */
  painted: 'fleet:painted',
} as const;

/**
 * Fleet: one row per device GET /devices lists, filtered by capture status, agent status and
 * name (kept in the hash). It asks again every 15 s; the rows are keyed by name and the list is
 * replaced in place, so the filter, the focus and the scroll position stay where the user left
 * them.
 */
export function FleetView({ session, route }: ViewProps) {
  const [filter, setFilter] = useState<FleetFilter>(() => readFleetFilter(route.query));
  const [devices, setDevices] = useState<DeviceSummary[]>();
  const [error, setError] = useState<unknown>();
  const [polls, setPolls] = useState(0);
  const now = useNow(15_000);
  const latest = useRef(0);
  const measuring = useRef(false);

  useEffect(() => {
    const ticket = ++latest.current;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const next = () => (timer = setTimeout(() => setPolls((n) => n + 1), pollMs));
    fetchFleet(session.api).then(
      (body) => {
        if (ticket !== latest.current) return;
        // Only this render's entries: a page left open does not collect one per poll.
        performance.clearMarks(fleetRenderMarks.data);
        performance.clearMeasures(fleetRenderMarks.committed);
        performance.clearMeasures(fleetRenderMarks.painted);
        performance.mark(fleetRenderMarks.data);
        measuring.current = true;
        setDevices(body);
        setError(undefined);
        next();
      },
      (failure: unknown) => {
        if (ticket !== latest.current) return;
        setError(failure);
        next();
      },
    );
    return () => {
      latest.current += 1;
      clearTimeout(timer);
    };
  }, [session, polls]);

  useLayoutEffect(() => {
    if (!measuring.current) return;
    measuring.current = false;
    performance.measure(fleetRenderMarks.committed, fleetRenderMarks.data);
    // A task queued from the next animation frame runs after that frame is painted.
    requestAnimationFrame(() =>
      setTimeout(() => performance.measure(fleetRenderMarks.painted, fleetRenderMarks.data)),
    );
  }, [devices]);

  // The filter lives in the hash without a new history entry per keystroke.
  const change = (next: FleetFilter) => {
    setFilter(next);
    history.replaceState(null, '', hashFor('fleet', [], writeFleetFilter(next)));
  };

  const shown = devices ? filterDevices(devices, filter) : [];
  return (
    <Fragment>
      <h1>Fleet</h1>
      <ErrorNote error={error} title="The fleet is unavailable" />
      <FilterForm filter={filter} devices={devices ?? []} onChange={change} />
      {devices ? (
        <FleetTable devices={shown} all={devices.length} max={busiest24h(devices)} now={now} />
      ) : error ? null : (
        <p role="status">Asking the gateway for the fleet…</p>
      )}
    </Fragment>
  );
}

function FilterForm({
  filter,
  devices,
  onChange,
}: {
  filter: FleetFilter;
  devices: readonly DeviceSummary[];
  onChange: (filter: FleetFilter) => void;
}) {
  const captures = captureCounts(devices);
  const agents = agentCounts(devices);
  return (
    <form class="fleet-filter" role="search" onSubmit={(event) => event.preventDefault()}>
      <div class="field">
        <label for="fleet-name">Device name contains</label>
        <input
          id="fleet-name"
          type="search"
          value={filter.name}
          onInput={(event) => onChange({ ...filter, name: event.currentTarget.value })}
          autocomplete="off"
        />
      </div>
      <div class="field">
        <label for="fleet-capture">Capture</label>
        <select
          id="fleet-capture"
          value={filter.capture}
          onChange={(event) =>
            onChange({ ...filter, capture: event.currentTarget.value as FleetFilter['capture'] })
          }
        >
          <option value="">Any ({formatCount(devices.length)})</option>
          {captureStatuses.map((s) => (
            <option key={s} value={s}>
              {captureLabels[s]} ({formatCount(captures[s])})
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="fleet-agent">Agent</label>
        <select
          id="fleet-agent"
          value={filter.agent}
          onChange={(event) =>
            onChange({ ...filter, agent: event.currentTarget.value as FleetFilter['agent'] })
          }
        >
          <option value="">Any ({formatCount(devices.length)})</option>
          {agentStatuses.map((s) => (
            <option key={s} value={s}>
              {agentLabels[s]} ({formatCount(agents[s])})
            </option>
          ))}
        </select>
      </div>
    </form>
  );
}

function FleetTable({
  devices,
  all,
  max,
  now,
}: {
  devices: readonly DeviceSummary[];
  all: number;
  max: number;
  now: Date;
}) {
  return (
    <Fragment>
      <p class="count" role="status">
        {devices.length === all
          ? `${formatCount(all)} ${all === 1 ? 'device' : 'devices'}`
          : `${formatCount(devices.length)} of ${formatCount(all)} devices`}
      </p>
      <FleetRows devices={devices} max={max} now={now} />
    </Fragment>
  );
}

/**
 * The rows as an ARIA table of boxes rather than a <table>: each row is laid out on its own
 * (a grid with the header's columns), so `content-visibility: auto` lets the browser skip the
 * style, layout and paint of rows out of view, while every row stays in the DOM, in the
 * accessibility tree and reachable by Tab and find-in-page.
 */
function FleetRows({
  devices,
  max,
  now,
}: {
  devices: readonly DeviceSummary[];
  max: number;
  now: Date;
}) {
  return (
    <div class="fleet" role="table" aria-label="Devices" aria-rowcount={devices.length + 1}>
      <div role="rowgroup">
        <div class="row head" role="row">
          <span role="columnheader">Device</span>
          <span role="columnheader">Capture</span>
          <span role="columnheader">Agent</span>
          <span role="columnheader">Last 24 hours</span>
          <span role="columnheader">Archived</span>
        </div>
      </div>
      <div role="rowgroup">{devices.map((device) => fleetRow(device, max, now))}</div>
    </div>
  );
}

/**
 * " 3 minutes ago" (one text node, its space included), or `none`. The local time is on the
 * Device view: formatting it for every row would cost the 1,000-device render more than
 * anything else in a row.
 */
const ago = (iso: string | null, now: Date, none: string): string =>
  ` ${iso === null ? none : formatAgo(new Date(iso), now)}`;

/**
 * One device's row. A plain function, not a component, and no separator nodes: the rows are
 * what the 1,000-device budget is spent on, and each component or node costs (bench:console).
 */
function fleetRow(device: DeviceSummary, max: number, now: Date) {
  const { capture, agent } = device;
  const share = archiveShare(device);
  const byType = Object.entries(capture.by_content_type).map(([key, t]) => ({
    key,
    value: t.items_last_24h,
  }));
  const parts = byType.length > 0 ? byType : [{ key: 'all', value: capture.items_last_24h }];
  return (
    <div class="row" role="row" key={device.device_name} data-device={device.device_name}>
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

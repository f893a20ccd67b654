import type { DeviceSummary } from '@screenfleet/contracts';
import { Fragment, h } from '../vendor/preact.js';
import { useEffect, useRef, useState } from '../vendor/hooks.js';
import {
  agentCounts,
  agentLabels,
  agentStatuses,
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
import { formatCount } from '../format.js';
import { hashFor } from '../route.js';
import { ErrorNote, useNow } from '../ui.js';
import type { ViewProps } from './view-props.js';
import { FleetRows } from './fleet-rows.js';

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

  /** Called when the rows of the devices shown are in the DOM (before the frame is painted). */
  const rendered = () => {
    if (!measuring.current) return;
    measuring.current = false;
    performance.measure(fleetRenderMarks.committed, fleetRenderMarks.data);
    // A task queued from the next animation frame runs after that frame is painted.
    requestAnimationFrame(() =>
      setTimeout(() => performance.measure(fleetRenderMarks.painted, fleetRenderMarks.data)),
    );
  };

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
        <FleetTable
          devices={shown}
          all={devices.length}
          max={busiest24h(devices)}
          now={now}
          onRendered={rendered}
        />
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
  onRendered,
}: {
  devices: readonly DeviceSummary[];
  all: number;
  max: number;
  now: Date;
  onRendered: () => void;
}) {
  return (
    <Fragment>
      <p class="count" role="status">
        {devices.length === all
          ? `${formatCount(all)} ${all === 1 ? 'device' : 'devices'}`
          : `${formatCount(devices.length)} of ${formatCount(all)} devices`}
      </p>
      <FleetRows devices={devices} max={max} now={now} onRendered={onRendered} />
    </Fragment>
  );
}

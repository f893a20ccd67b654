import type { DeviceDetail, SearchAnswer, SearchAnswerItem } from '@screenfleet/contracts';
import { Fragment, h } from '../vendor/preact.js';
import { useEffect, useRef, useState } from '../vendor/hooks.js';
import { contentTypeLabel, TimelineChart } from '../charts.js';
import { agentLabels, archiveShare, captureLabels } from '../fleet.js';
import { formatCount, formatDay, formatHour, formatShare } from '../format.js';
import { hashFor } from '../route.js';
import { readSearchParams, writeSearchParams } from '../search-params.js';
import { can } from '../session.js';
import { ErrorNote, Instant, Section, useNow } from '../ui.js';
import type { ViewProps } from './view-props.js';
import { DeleteRange } from './delete-range.js';

const pollMs = 15_000;
/** How many of the device's newest captures are shown. */
export const newestCount = 10;

/** One round of the view's requests: the device's detail and its newest captures. */
interface Loaded {
  name: string;
  device?: DeviceDetail;
  error?: unknown;
  newest?: SearchAnswer;
  newestError?: unknown;
}

type Outcome<T> = { body: T } | { failure: unknown };
const settle = <T,>(request: Promise<T>): Promise<Outcome<T>> =>
  request.then(
    (body) => ({ body }),
    (failure: unknown) => ({ failure }),
  );

/**
 * Device: one device's capture, agent and archive (GET /devices/{name}), its items per hour
 * (24 h) and per day (30 days) as charts, its newest captures (GET /search), a search box that
 * hands over to the Search view, and (data:delete) deleting a time range. Asked again every
 * 15 s, and at once after a delete.
 *
 * Both answers are shown together, once both came: nothing appears piece by piece, and when
 * the address names another device, the one shown stays (marked busy) until the other's answers
 * replace it whole, never an empty page or one device's name over another's figures.
 */
export function DeviceView({ session, route, go }: ViewProps) {
  const name = route.path[0] ?? '';
  const [loaded, setLoaded] = useState<Loaded>();
  const [polls, setPolls] = useState(0);
  const now = useNow(15_000);
  const latest = useRef(0);
  const searcher = can(session, 'search');

  useEffect(() => {
    const ticket = ++latest.current;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const newestQuery = new URLSearchParams({ device_name: name, limit: String(newestCount) });
    const detail = settle(session.api.get<DeviceDetail>(`/devices/${encodeURIComponent(name)}`));
    const found = searcher
      ? settle(session.api.get<SearchAnswer>('/search', newestQuery))
      : Promise.resolve(undefined);
    void Promise.all([detail, found]).then(([d, f]) => {
      if (ticket !== latest.current) return;
      setLoaded((shown) => {
        // A failed poll keeps what this device showed, with the error above it.
        const same = shown?.name === name ? shown : undefined;
        return {
          name,
          ...('body' in d ? { device: d.body } : { device: same?.device, error: d.failure }),
          ...(f === undefined
            ? {}
            : 'body' in f
              ? { newest: f.body }
              : { newest: same?.newest, newestError: f.failure }),
        };
      });
      timer = setTimeout(() => setPolls((n) => n + 1), pollMs);
    });
    return () => {
      latest.current += 1;
      clearTimeout(timer);
    };
  }, [session, name, polls]);

  if (!loaded) {
    return (
      <Fragment>
        <p class="crumbs">
          <a href={hashFor('fleet')}>Fleet</a> › {name}
        </p>
        <h1>Device {name}</h1>
        <p class="loading later" role="status">
          Asking the gateway for {name}…
        </p>
      </Fragment>
    );
  }
  // The device shown: the address's, or (until its answers come) the one before it.
  const shown = loaded.name;
  const { device, newest } = loaded;
  const opening = shown !== name;
  return (
    <Fragment>
      <p class="crumbs">
        <a href={hashFor('fleet')}>Fleet</a> › {shown}
        {/* Beside the crumbs, where the words move nothing below them. */}
        <span class="loading later" role="status">
          {opening ? ` · opening ${name}…` : ''}
        </span>
      </p>
      <h1>Device {shown}</h1>
      <div class="device" aria-busy={opening ? 'true' : undefined}>
        <ErrorNote error={loaded.error} title="This device is unavailable" />
        {device ? <DeviceTiles device={device} now={now} /> : null}
        {device ? (
          <div class="charts">
            <Section id="device-hourly" title="Items per hour, last 24 hours">
              <TimelineChart
                label="Items per hour over the last 24 hours"
                points={device.timeline.hourly.map((b) => ({
                  label: formatHour(new Date(b.start)),
                  items: b.items,
                }))}
              />
            </Section>
            <Section id="device-daily" title="Items per day, last 30 days">
              <TimelineChart
                label="Items per day over the last 30 days"
                points={device.timeline.daily.map((b) => ({
                  label: formatDay(new Date(b.start)),
                  items: b.items,
                }))}
              />
            </Section>
          </div>
        ) : null}
        {searcher ? (
          <Fragment>
            <DeviceSearch
              key={shown}
              onSearch={(q) =>
                go(
                  hashFor(
                    'search',
                    [],
                    writeSearchParams({
                      ...readSearchParams(new URLSearchParams()),
                      device_name: shown,
                      q,
                    }),
                  ),
                )
              }
            />
            <ErrorNote error={loaded.newestError} title="The newest captures are unavailable" />
            {newest ? <Newest answer={newest} now={now} /> : null}
          </Fragment>
        ) : null}
        {can(session, 'data:delete') ? (
          // Keyed: a review or confirmation never outlives the device it names.
          <DeleteRange
            key={shown}
            session={session}
            device={shown}
            onDeleted={() => setPolls((n) => n + 1)}
          />
        ) : null}
      </div>
    </Fragment>
  );
}

function DeviceTiles({ device, now }: { device: DeviceDetail; now: Date }) {
  const { capture, agent, archive } = device;
  const share = archiveShare(device);
  const types = Object.entries(capture.by_content_type);
  return (
    <dl class="tiles">
      <div class="tile" data-field="capture_status">
        <dt>Capture</dt>
        <dd>
          <span class={`badge capture-${device.capture_status}`}>
            {captureLabels[device.capture_status]}
          </span>
        </dd>
      </div>
      <div class="tile" data-field="last_item_time">
        <dt>Last item</dt>
        <dd>
          <Instant iso={capture.last_item_time} now={now} none="none yet" />
        </dd>
      </div>
      <div class="tile" data-field="items_stored">
        <dt>Items stored</dt>
        <dd>
          {formatCount(capture.items_stored)}
          {types.length > 1 ? (
            <span class="hint">
              {' '}
              (
              {types
                .map(([t, c]) => `${formatCount(c.items_stored)} ${contentTypeLabel(t)}`)
                .join(', ')}
              )
            </span>
          ) : null}
        </dd>
      </div>
      <div class="tile" data-field="items_last_24h">
        <dt>Last hour / 24 hours</dt>
        <dd>
          {formatCount(capture.items_last_hour)} / {formatCount(capture.items_last_24h)}
        </dd>
      </div>
      <div class="tile" data-field="agent">
        <dt>Agent</dt>
        <dd>
          <span class={`badge agent-${agent.status}`}>{agentLabels[agent.status]}</span>, heartbeat{' '}
          <Instant iso={agent.last_heartbeat_time} now={now} none="never" />
        </dd>
      </div>
      <div class="tile" data-field="archive">
        <dt>Archived</dt>
        <dd>
          {formatCount(archive.items_archived)}
          {share === undefined ? '' : ` (${formatShare(share)})`}, up to{' '}
          <Instant iso={archive.last_archived_item_time} now={now} none="nothing yet" />
        </dd>
      </div>
      <div class="tile" data-field="first_item_time">
        <dt>First item</dt>
        <dd>
          <Instant iso={capture.first_item_time} now={now} none="none yet" />
        </dd>
      </div>
    </dl>
  );
}

function DeviceSearch({ onSearch }: { onSearch: (q: string) => void }) {
  const [q, setQ] = useState('');
  return (
    <form
      class="device-search"
      role="search"
      aria-label="This device's captures"
      onSubmit={(event) => {
        event.preventDefault();
        onSearch(q.trim());
      }}
    >
      <div class="field wide">
        <label for="device-q">Search this device for</label>
        <input
          id="device-q"
          type="search"
          value={q}
          onInput={(event) => setQ(event.currentTarget.value)}
        />
      </div>
      <div class="actions">
        <button type="submit">Search device</button>
      </div>
    </form>
  );
}

const itemKey = (item: SearchAnswerItem) =>
  item.type === 'OCR' ? item.content.frame_id : item.content.chunk_id;

function Newest({ answer, now }: { answer: SearchAnswer; now: Date }) {
  return (
    <section class="newest" aria-labelledby="newest-title">
      <h2 id="newest-title">Newest captures</h2>
      {answer.data.length === 0 ? <p class="none">None stored.</p> : null}
      <table class="captures">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">App</th>
            <th scope="col">Window</th>
            <th scope="col">Text</th>
          </tr>
        </thead>
        <tbody>
          {answer.data.map((item) => (
            <tr key={itemKey(item)}>
              <td>
                <Instant iso={item.content.timestamp} now={now} none="" />
              </td>
              <td>
                {item.type === 'OCR' ? item.content.app_name : <span class="none">audio</span>}
              </td>
              <td>{item.type === 'OCR' ? item.content.window_name : ''}</td>
              <td class="text">
                {item.type === 'OCR' ? item.content.text : item.content.transcription}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

import type { SearchAnswer, SearchAnswerItem } from '@screenfleet/contracts';
import { Fragment, h } from '../vendor/preact.js';
import { useEffect, useRef, useState } from '../vendor/hooks.js';
import { knownDevices } from '../devices.js';
import { highlight } from '../highlight.js';
import { hashFor } from '../route.js';
import {
  fromLocalInput,
  pageSize,
  pageText,
  readSearchParams,
  sincePresets,
  toLocalInput,
  toSearchQuery,
  writeSearchParams,
  type SearchParams,
} from '../search-params.js';
import { ErrorNote, Instant, useNow } from '../ui.js';
import type { ViewProps } from './view-props.js';

/**
 * Search: GET /search's parameters as a form, the results with the matched words marked, and
 * pages that name the exact total. The parameters live in the hash (search-params.ts).
 */
export function SearchView({ session, route, go }: ViewProps) {
  const params = readSearchParams(route.query);
  const key = writeSearchParams(params).toString();
  const [runs, setRuns] = useState(0);
  const [answer, setAnswer] = useState<{ params: SearchParams; body: SearchAnswer }>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(false);
  const latest = useRef(0);

  useEffect(() => {
    const ticket = ++latest.current;
    setLoading(true);
    session.api.get<SearchAnswer>('/search', toSearchQuery(params)).then(
      (body) => {
        if (ticket !== latest.current) return;
        setAnswer({ params, body });
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (ticket !== latest.current) return;
        setError(failure);
        setAnswer(undefined);
        setLoading(false);
      },
    );
    return () => {
      latest.current += 1; // an answer that comes after this is for nobody
    };
  }, [key, runs, session]);

  const show = (next: SearchParams) => {
    const hash = hashFor('search', [], writeSearchParams(next));
    if (hash === location.hash) setRuns(runs + 1);
    else go(hash);
  };

  return (
    <Fragment>
      <h1>Search</h1>
      <SearchForm
        session={session}
        params={params}
        onSearch={(next) => show({ ...next, offset: 0 })}
      />
      <ErrorNote error={error} title="The search failed" />
      <p class="loading" role="status">
        {loading ? 'Searching…' : ''}
      </p>
      {answer ? (
        <Results
          answer={answer.body}
          query={answer.params.q}
          onPage={(offset) => show({ ...answer.params, offset })}
        />
      ) : null}
    </Fragment>
  );
}

type RangeChoice = '' | 'custom' | (typeof sincePresets)[number]['start'];

function rangeOf(params: SearchParams): RangeChoice {
  if (!params.start_time && !params.end_time) return '';
  const preset = sincePresets.find(({ start }) => start === params.start_time);
  return preset && !params.end_time ? preset.start : 'custom';
}

function SearchForm({
  session,
  params,
  onSearch,
}: Pick<ViewProps, 'session'> & { params: SearchParams; onSearch: (p: SearchParams) => void }) {
  const [draft, setDraft] = useState(params);
  const [range, setRange] = useState<RangeChoice>(rangeOf(params));
  const [devices, setDevices] = useState<readonly string[]>([]);
  const key = writeSearchParams(params).toString();
  useEffect(() => {
    setDraft(params);
    setRange(rangeOf(params));
  }, [key]);
  useEffect(() => {
    void knownDevices(session).then(setDevices);
  }, [session]);

  const text = (field: keyof SearchParams) => (event: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [field]: event.currentTarget.value });
  const chooseRange = (choice: RangeChoice) => {
    setRange(choice);
    if (choice !== 'custom') setDraft({ ...draft, start_time: choice, end_time: '' });
    else setDraft({ ...draft, start_time: '', end_time: '' });
  };
  const bound = session.who.devices;

  return (
    <form
      class="search-form"
      role="search"
      aria-label="Search captured text"
      onSubmit={(event) => {
        event.preventDefault();
        onSearch(draft);
      }}
    >
      <div class="field wide">
        <label for="search-q">Words</label>
        <input
          id="search-q"
          type="search"
          value={draft.q}
          onInput={text('q')}
          autocomplete="off"
          aria-describedby="search-q-hint"
        />
        <span id="search-q-hint" class="hint">
          Every word must occur (whole words; case and accents ignored). Empty: everything.
        </span>
      </div>
      <div class="field">
        <label for="search-type">Content</label>
        <select
          id="search-type"
          value={draft.content_type || 'all'}
          onChange={text('content_type')}
        >
          <option value="all">Screen text and audio</option>
          <option value="ocr">Screen text (OCR)</option>
          <option value="audio">Audio transcriptions</option>
        </select>
      </div>
      <div class="field">
        <label for="search-range">Time</label>
        <select
          id="search-range"
          value={range}
          onChange={(event) => chooseRange(event.currentTarget.value as RangeChoice)}
        >
          <option value="">Any time</option>
          {sincePresets.map(({ start, label }) => (
            <option key={start} value={start}>
              {label}
            </option>
          ))}
          <option value="custom">From… to…</option>
        </select>
      </div>
      {range === 'custom' ? (
        <Fragment>
          <div class="field">
            <label for="search-from">From (local time)</label>
            <input
              id="search-from"
              type="datetime-local"
              value={toLocalInput(draft.start_time)}
              onInput={(event) =>
                setDraft({ ...draft, start_time: fromLocalInput(event.currentTarget.value) })
              }
            />
          </div>
          <div class="field">
            <label for="search-to">To (local time)</label>
            <input
              id="search-to"
              type="datetime-local"
              value={toLocalInput(draft.end_time)}
              onInput={(event) =>
                setDraft({ ...draft, end_time: fromLocalInput(event.currentTarget.value) })
              }
            />
          </div>
        </Fragment>
      ) : null}
      <div class="field">
        <label for="search-app">App</label>
        <input id="search-app" value={draft.app_name} onInput={text('app_name')} />
      </div>
      <div class="field">
        <label for="search-window">Window</label>
        <input id="search-window" value={draft.window_name} onInput={text('window_name')} />
      </div>
      <div class="field">
        <label for="search-device">Device</label>
        {bound ? (
          <select id="search-device" value={draft.device_name} onChange={text('device_name')}>
            <option value="">All my devices</option>
            {bound.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        ) : (
          <Fragment>
            <input
              id="search-device"
              value={draft.device_name}
              onInput={text('device_name')}
              list="search-device-names"
              placeholder="all devices"
            />
            <datalist id="search-device-names">
              {devices.map((name) => (
                <option key={name} value={name} />
              ))}
            </datalist>
          </Fragment>
        )}
      </div>
      <div class="field">
        <label for="search-order">Order</label>
        <select id="search-order" value={draft.order || 'newest'} onChange={text('order')}>
          <option value="newest">Newest first</option>
          <option value="relevance">Best match first</option>
        </select>
      </div>
      <div class="actions">
        <button type="submit">Search</button>
      </div>
    </form>
  );
}

function Results({
  answer,
  query,
  onPage,
}: {
  answer: SearchAnswer;
  query: string;
  onPage: (offset: number) => void;
}) {
  const now = useNow(30_000);
  const { offset, total } = answer.pagination;
  const shown = answer.data.length;
  const range = pageText(offset, shown, total);
  return (
    <section class="results" aria-labelledby="results-title">
      <h2 id="results-title">
        {query ? `Results for “${query}”` : 'Results'} <span class="count">{range}</span>
      </h2>
      {shown === 0 ? <p class="none">Nothing matches.</p> : null}
      <ol start={offset + 1}>
        {answer.data.map((item) => (
          <Result key={itemId(item)} item={item} query={query} now={now} />
        ))}
      </ol>
      <nav class="pages" aria-label="Result pages">
        <button
          type="button"
          aria-disabled={offset === 0}
          onClick={() => offset > 0 && onPage(Math.max(0, offset - pageSize))}
        >
          Previous page
        </button>
        <span aria-hidden="true">{range}</span>
        <button
          type="button"
          aria-disabled={offset + shown >= total}
          onClick={() => offset + shown < total && onPage(offset + pageSize)}
        >
          Next page
        </button>
      </nav>
    </section>
  );
}

const itemId = (item: SearchAnswerItem) =>
  item.type === 'OCR' ? item.content.frame_id : item.content.chunk_id;

function Result({ item, query, now }: { item: SearchAnswerItem; query: string; now: Date }) {
  const text = item.type === 'OCR' ? item.content.text : item.content.transcription;
  const where =
    item.type === 'OCR'
      ? [item.content.app_name, item.content.window_name].filter(Boolean).join(' — ')
      : '';
  return (
    <li class="result">
      <p class="meta">
        <span class="kind">{item.type === 'OCR' ? 'Screen text' : 'Audio'}</span>{' '}
        <Instant iso={item.content.timestamp} now={now} none="" />
        {' · '}
        <span class="device">{item.content.device_name}</span>
        {where ? <span class="where"> · {where}</span> : null}
      </p>
      <p class="text">
        {highlight(text, query).map((piece, i) =>
          piece.match ? <mark key={i}>{piece.text}</mark> : piece.text,
        )}
      </p>
    </li>
  );
}

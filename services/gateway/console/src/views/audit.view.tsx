import type { AuditPageView, AuditRowView } from '@screenfleet/contracts';
import { Fragment, h } from '../vendor/preact.js';
import { useEffect, useRef, useState } from '../vendor/hooks.js';
import {
  auditActions,
  detailsText,
  durationText,
  outcomeText,
  readAuditFilters,
  toAuditQuery,
  writeAuditFilters,
  type AuditFilters,
} from '../audit-params.js';
import { knownDevices } from '../devices.js';
import { formatCount } from '../format.js';
import { hashFor } from '../route.js';
import { fromLocalInput, toLocalInput } from '../search-params.js';
import { ErrorNote, Instant, useNow } from '../ui.js';
import type { ViewProps } from './view-props.js';

/** The rows shown so far (pages appended, newest first) and where the next older page starts. */
interface Loaded {
  key: string;
  rows: AuditRowView[];
  next: string | null;
}

/**
 * Audit (audit:read): GET /audit's rows, newest first, filtered by device, token, action and
 * time (the filters in the hash, audit-params.ts); "Older rows" appends the page after
 * next_cursor, so rows written meanwhile never shift what is shown.
 */
export function AuditView({ session, route, go }: ViewProps) {
  const filters = readAuditFilters(route.query);
  const key = writeAuditFilters(filters).toString();
  const [runs, setRuns] = useState(0);
  const [loaded, setLoaded] = useState<Loaded>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(false);
  const latest = useRef(0);

  const load = (cursor?: string) => {
    const ticket = ++latest.current;
    setLoading(true);
    session.api.get<AuditPageView>('/audit', toAuditQuery(filters, cursor)).then(
      (page) => {
        if (ticket !== latest.current) return;
        setLoaded((before) => ({
          key,
          rows: cursor && before ? [...before.rows, ...page.rows] : page.rows,
          next: page.next_cursor,
        }));
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (ticket !== latest.current) return;
        setError(failure);
        setLoading(false);
      },
    );
  };

  useEffect(() => {
    load();
    return () => {
      latest.current += 1; // an answer that comes after this is for nobody
    };
  }, [key, runs, session]);

  const show = (next: AuditFilters) => {
    const hash = hashFor('audit', [], writeAuditFilters(next));
    if (hash === location.hash) setRuns((n) => n + 1);
    else go(hash);
  };
  const shown = loaded && loaded.key === key ? loaded : undefined;

  return (
    <Fragment>
      <h1>Audit</h1>
      <AuditForm session={session} filters={filters} onApply={show} />
      <ErrorNote error={error} title="The audit trail is unavailable" />
      <p class="loading later" role="status">
        {loading ? 'Asking the gateway…' : ''}
      </p>
      {shown ? (
        <AuditTable
          rows={shown.rows}
          older={shown.next}
          busy={loading}
          onOlder={(cursor) => load(cursor)}
        />
      ) : null}
    </Fragment>
  );
}

function AuditForm({
  session,
  filters,
  onApply,
}: Pick<ViewProps, 'session'> & { filters: AuditFilters; onApply: (f: AuditFilters) => void }) {
  const [draft, setDraft] = useState(filters);
  const [devices, setDevices] = useState<readonly string[]>([]);
  const key = writeAuditFilters(filters).toString();
  useEffect(() => setDraft(filters), [key]);
  useEffect(() => {
    void knownDevices(session).then(setDevices);
  }, [session]);
  const text = (field: keyof AuditFilters) => (event: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [field]: event.currentTarget.value });
  const time = (field: 'from' | 'to') => (event: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [field]: fromLocalInput(event.currentTarget.value) });

  return (
    <form
      class="search-form"
      role="search"
      aria-label="Filter the audit trail"
      onSubmit={(event) => {
        event.preventDefault();
        onApply(draft);
      }}
    >
      <div class="field">
        <label for="audit-device">Device</label>
        <input
          id="audit-device"
          value={draft.device}
          onInput={text('device')}
          list="audit-device-names"
          placeholder="all devices"
        />
        <datalist id="audit-device-names">
          {devices.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
      </div>
      <div class="field">
        <label for="audit-token">Token (actor)</label>
        <input
          id="audit-token"
          value={draft.token}
          onInput={text('token')}
          placeholder="any token"
          spellcheck={false}
        />
      </div>
      <div class="field">
        <label for="audit-action">Action</label>
        <select id="audit-action" value={draft.action} onChange={text('action')}>
          <option value="">Any action</option>
          {auditActions.map((action) => (
            <option key={action} value={action}>
              {action}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="audit-from">From (local time)</label>
        <input
          id="audit-from"
          type="datetime-local"
          value={toLocalInput(draft.from)}
          onInput={time('from')}
        />
      </div>
      <div class="field">
        <label for="audit-to">To (local time, not included)</label>
        <input
          id="audit-to"
          type="datetime-local"
          value={toLocalInput(draft.to)}
          onInput={time('to')}
        />
      </div>
      <div class="actions">
        <button type="submit">Show rows</button>{' '}
        <button
          type="button"
          class="secondary"
          onClick={() => onApply(readAuditFilters(new URLSearchParams()))}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}

function AuditTable({
  rows,
  older,
  busy,
  onOlder,
}: {
  rows: AuditRowView[];
  older: string | null;
  busy: boolean;
  onOlder: (cursor: string) => void;
}) {
  const now = useNow(30_000);
  return (
    <section aria-labelledby="audit-rows-title">
      <h2 id="audit-rows-title">
        Rows <span class="count">{formatCount(rows.length)} shown, newest first</span>
      </h2>
      {rows.length === 0 ? (
        <p class="none">No rows match.</p>
      ) : (
        <table class="records audit">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Device</th>
              <th scope="col">Outcome</th>
              <th scope="col">Duration</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const details = detailsText(row.details);
              const whole = detailsText(row.details, Number.POSITIVE_INFINITY);
              return (
                <tr key={row.id} data-id={row.id} class={`outcome-${row.outcome}`}>
                  <td>
                    <Instant iso={row.at} now={now} none="" />
                  </td>
                  <td>
                    <code>{row.actor}</code>
                  </td>
                  <td>{row.action}</td>
                  <td>{row.device ?? <span class="none">none</span>}</td>
                  <td class="outcome">{outcomeText(row.outcome, row.outcome_code)}</td>
                  <td>{durationText(row.duration_ms)}</td>
                  <td class="details">
                    <code {...(details !== whole ? { title: whole } : {})}>{details}</code>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <p class="actions">
        {/* Kept when there is no older page (disabled), so a pressed button keeps the focus. */}
        {rows.length > 0 ? (
          <button
            type="button"
            aria-disabled={busy || older === null}
            onClick={() => older !== null && !busy && onOlder(older)}
          >
            Older rows
          </button>
        ) : null}{' '}
        {rows.length > 0 && older === null ? <span class="none">No older rows.</span> : null}
      </p>
    </section>
  );
}

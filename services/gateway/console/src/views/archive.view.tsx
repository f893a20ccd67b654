import type { ArchiveActionResult, ArchiveStatus } from '@screenfleet/contracts';
import { Fragment, h, type ComponentChildren } from '../vendor/preact.js';
import { useEffect, useRef, useState } from '../vendor/hooks.js';
import { formatBytes, formatCount } from '../format.js';
import { fromLocalInput } from '../search-params.js';
import { can } from '../session.js';
import { ErrorNote, Instant, Section, useNow } from '../ui.js';
import type { ViewProps } from './view-props.js';

/** How often the status is asked again: often while a pass runs or just after an action. */
const busyPollMs = 2_000;
const idlePollMs = 15_000;
const busyAfterActionMs = 60_000;

/**
 * Archive: GET /archive/status's twelve fields as tiles in units people read, and (with
 * archive:write) configure, run now and restore, each showing the API's answer or error.
 */
export function ArchiveView({ session }: ViewProps) {
  const [status, setStatus] = useState<ArchiveStatus>();
  const [error, setError] = useState<unknown>();
  const [actedAt, setActedAt] = useState(0);
  const [polls, setPolls] = useState(0);
  const now = useNow(5_000);
  const latest = useRef(0);

  // One request at a time; the next is planned when it answers, sooner while busy.
  useEffect(() => {
    const ticket = ++latest.current;
    let timer: ReturnType<typeof setTimeout> | undefined;
    session.api.get<ArchiveStatus>('/archive/status').then(
      (body) => {
        if (ticket !== latest.current) return;
        setStatus(body);
        setError(undefined);
        const busy = body.is_uploading || Date.now() - actedAt < busyAfterActionMs;
        timer = setTimeout(() => setPolls((n) => n + 1), busy ? busyPollMs : idlePollMs);
      },
      (failure: unknown) => {
        if (ticket !== latest.current) return;
        setError(failure);
        timer = setTimeout(() => setPolls((n) => n + 1), idlePollMs);
      },
    );
    return () => {
      latest.current += 1; // an answer that comes after this is for nobody
      clearTimeout(timer);
    };
  }, [session, polls, actedAt]);

  /** An action's answer carries the status after it: shown at once, then polled. */
  const acted = (result: ArchiveActionResult) => {
    setStatus(result.status);
    setActedAt(Date.now());
  };
  const writer = can(session, 'archive:write');

  return (
    <Fragment>
      <h1>Archive</h1>
      <ErrorNote error={error} title="The archive status is unavailable" />
      {status ? <StatusTiles status={status} now={now} /> : null}
      <p class="actions">
        <button type="button" onClick={() => setPolls((n) => n + 1)}>
          Refresh status
        </button>
      </p>
      {writer && status ? (
        <div class="panels">
          <RunNow session={session} onDone={acted} />
          <Configure session={session} status={status} onDone={acted} />
          <Restore session={session} onDone={acted} />
        </div>
      ) : null}
      {!writer ? (
        <p class="hint">This token may read the archive's status (archive:read), not change it.</p>
      ) : null}
    </Fragment>
  );
}

function Tile({
  field,
  label,
  children,
}: {
  field: string;
  label: string;
  children: ComponentChildren;
}) {
  return (
    <div class="tile" data-field={field}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function StatusTiles({ status, now }: { status: ArchiveStatus; now: Date }) {
  const items = (n: number) => `${formatCount(n)} ${n === 1 ? 'item' : 'items'}`;
  const files = (n: number) => `${formatCount(n)} ${n === 1 ? 'file' : 'files'}`;
  return (
    <section aria-labelledby="archive-status-title">
      <h2 id="archive-status-title">Status</h2>
      <dl class="tiles">
        <Tile field="enabled" label="Archiving">
          {status.enabled ? 'On' : 'Off'}
        </Tile>
        <Tile field="retention_days" label="Keeps items locally for">
          {formatCount(status.retention_days)} {status.retention_days === 1 ? 'day' : 'days'}
        </Tile>
        <Tile field="pending_count" label="Waiting to be archived">
          {items(status.pending_count)}
        </Tile>
        <Tile field="is_uploading" label="Uploading now">
          {status.is_uploading ? 'Yes' : 'No'}
        </Tile>
        <Tile field="watermark" label="Archived up to">
          <Instant iso={status.watermark} now={now} none="nothing yet" />
        </Tile>
        <Tile field="last_cleanup" label="Last pass">
          <Instant iso={status.last_cleanup} now={now} none="never" />
        </Tile>
        <Tile field="chunks_uploaded" label="Chunks uploaded">
          {formatCount(status.chunks_uploaded)}
        </Tile>
        <Tile field="storage_used" label="Storage used">
          {formatBytes(status.storage_used)}
        </Tile>
        <Tile field="storage_limit" label="Storage limit">
          {formatBytes(status.storage_limit)}
        </Tile>
        <Tile field="media_files_uploaded" label="Media files uploaded">
          {files(status.media_files_uploaded)}
        </Tile>
        <Tile field="media_files_pending" label="Media files waiting">
          {files(status.media_files_pending)}
        </Tile>
        <Tile field="last_error" label="Last error">
          {status.last_error === null ? <span class="none">none</span> : status.last_error}
        </Tile>
      </dl>
    </section>
  );
}

/** The state of one action: its request in flight, its last answer or error. */
function useAction(onDone: (result: ArchiveActionResult) => void) {
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<string>();
  const [error, setError] = useState<unknown>();
  const run = (send: () => Promise<ArchiveActionResult>) => {
    if (busy) return;
    setBusy(true);
    setAnswer(undefined);
    setError(undefined);
    send().then(
      (result) => {
        setBusy(false);
        setAnswer(result.message);
        onDone(result);
      },
      (failure: unknown) => {
        setBusy(false);
        setError(failure);
      },
    );
  };
  const outcome = (
    <Fragment>
      <p class="answer" role="status">
        {answer ?? ''}
      </p>
      <ErrorNote error={error} />
    </Fragment>
  );
  return { busy, run, outcome };
}

type ActionProps = Pick<ViewProps, 'session'> & { onDone: (result: ArchiveActionResult) => void };

function RunNow({ session, onDone }: ActionProps) {
  const action = useAction(onDone);
  return (
    <Section id="archive-run" title="Run now">
      <p class="hint">Start an archive pass now instead of at the next interval.</p>
      <button
        type="button"
        aria-disabled={action.busy}
        onClick={() => action.run(() => session.api.post('/archive/run'))}
      >
        Run archive pass now
      </button>
      {action.outcome}
    </Section>
  );
}

function Configure({ session, status, onDone }: ActionProps & { status: ArchiveStatus }) {
  const action = useAction(onDone);
  const [enabled, setEnabled] = useState(status.enabled);
  const [days, setDays] = useState(String(status.retention_days));
  return (
    <Section id="archive-configure" title="Configure">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          // Sent as typed: the API names a bad value (a 400 naming retention_days).
          const retention = days.trim() === '' ? undefined : Number(days);
          action.run(() =>
            session.api.post('/archive/configure', {
              enabled,
              ...(retention === undefined ? {} : { retention_days: retention }),
            }),
          );
        }}
      >
        <div class="field check">
          <input
            id="archive-enabled"
            type="checkbox"
            checked={enabled}
            onChange={(event) => setEnabled(event.currentTarget.checked)}
          />
          <label for="archive-enabled">Archive items older than the retention</label>
        </div>
        <div class="field">
          <label for="archive-retention">Keep items locally for (days)</label>
          <input
            id="archive-retention"
            type="number"
            inputMode="numeric"
            min={1}
            step={1}
            value={days}
            onInput={(event) => setDays(event.currentTarget.value)}
          />
        </div>
        <button type="submit" aria-disabled={action.busy}>
          Save configuration
        </button>
      </form>
      {action.outcome}
    </Section>
  );
}

function Restore({ session, onDone }: ActionProps) {
  const action = useAction(onDone);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [device, setDevice] = useState('');
  return (
    <Section id="archive-restore" title="Restore a range">
      <p class="hint">
        Puts archived items of the range back (the archive must be off first, or the next pass moves
        them out again).
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          action.run(() =>
            session.api.post('/archive/restore', {
              from: fromLocalInput(from),
              to: fromLocalInput(to),
              ...(device.trim() ? { device_name: device.trim() } : {}),
            }),
          );
        }}
      >
        <div class="field">
          <label for="restore-from">From (local time)</label>
          <input
            id="restore-from"
            type="datetime-local"
            required
            value={from}
            onInput={(event) => setFrom(event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="restore-to">To (local time)</label>
          <input
            id="restore-to"
            type="datetime-local"
            required
            value={to}
            onInput={(event) => setTo(event.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="restore-device">Device (optional)</label>
          <input
            id="restore-device"
            value={device}
            onInput={(event) => setDevice(event.currentTarget.value)}
            placeholder="all devices"
          />
        </div>
        <button type="submit" aria-disabled={action.busy}>
          Restore range
        </button>
      </form>
      {action.outcome}
    </Section>
  );
}

import { Fragment, h, type ComponentChildren } from './vendor/preact.js';
import { useEffect, useState } from './vendor/hooks.js';
import { ApiError } from './api.js';
import { formatAgo, formatLocalTime } from './format.js';

/** An API error as the API gave it: its message, its status and each field it named. */
export function ErrorNote({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const api = error instanceof ApiError ? error : undefined;
  const message = error instanceof Error ? error.message : JSON.stringify(error);
  return (
    <div class="note error" role="alert">
      <p>
        {title ? <strong>{title}: </strong> : null}
        {message}
        {api && api.status > 0 ? <span class="status"> (HTTP {api.status})</span> : null}
      </p>
      {api && api.errors.length > 0 ? (
        <ul>
          {api.errors.map((field) => (
            <li key={`${field.path} ${field.rule}`}>
              <code>{field.path || '(body)'}</code>: {field.detail}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** The current time, again every `everyMs`: relative times ("3 minutes ago") stay true. */
export function useNow(everyMs: number): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const timer = setInterval(() => setNow(new Date()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** An API time as local time and how long ago; `none` when null. */
export function Instant({ iso, now, none }: { iso: string | null; now: Date; none: string }) {
  if (iso === null) return <span class="none">{none}</span>;
  const instant = new Date(iso);
  return (
    <Fragment>
      <time dateTime={iso}>{formatLocalTime(instant)}</time>{' '}
      <span class="ago">({formatAgo(instant, now)})</span>
    </Fragment>
  );
}

/** A titled part of a view; `id` names its heading for assistive technology. */
export function Section({
  id,
  title,
  children,
}: {
  id: string;
  title: string;
  children: ComponentChildren;
}) {
  return (
    <section class="panel" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

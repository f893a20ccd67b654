import type { DataDeleteResult, SearchAnswer } from '@screenfleet/contracts';
import { Fragment, h } from '../vendor/preact.js';
import { useEffect, useRef, useState } from '../vendor/hooks.js';
import { formatCount, formatLocalTime } from '../format.js';
import { fromLocalInput } from '../search-params.js';
import { can, type Session } from '../session.js';
import { ErrorNote, Section } from '../ui.js';

/** What a confirmation names: the device, the range and how many items it holds now. */
interface Review {
  start: string;
  end: string;
  /** Items stored in the range now (GET /search's exact total); undefined without `search`. */
  stored?: number;
}

const items = (n: number) => `${formatCount(n)} ${n === 1 ? 'item' : 'items'}`;

/**
 * Delete a time range of one device (data:delete): the range is reviewed first, and a
 * confirmation names the device, the range as local time and the items stored in it (counted
 * by GET /search, when the token may search) before POST /data/delete-range is sent. The
 * answer's counts are shown, or the API's error as it gave it.
 */
export function DeleteRange({
  session,
  device,
  onDeleted,
}: {
  session: Session;
  device: string;
  onDeleted: () => void;
}) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [review, setReview] = useState<Review>();
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<DataDeleteResult>();
  const [error, setError] = useState<unknown>();
  const confirmHeading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    if (review) confirmHeading.current?.focus();
  }, [review]);

  const run = <T,>(send: () => Promise<T>, done: (answer: T) => void) => {
    if (busy) return;
    setBusy(true);
    setError(undefined);
    send().then(
      (answer) => {
        setBusy(false);
        done(answer);
      },
      (failure: unknown) => {
        setBusy(false);
        setError(failure);
      },
    );
  };

  const askReview = () => {
    const start = fromLocalInput(from);
    const end = fromLocalInput(to);
    setResult(undefined);
    if (!can(session, 'search')) {
      setReview({ start, end });
      return;
    }
    const query = new URLSearchParams({
      device_name: device,
      start_time: start,
      end_time: end,
      limit: '1',
    });
    run(
      () => session.api.get<SearchAnswer>('/search', query),
      (answer) => setReview({ start, end, stored: answer.pagination.total }),
    );
  };

  const confirm = (asked: Review) =>
    run(
      () =>
        session.api.post<DataDeleteResult>('/data/delete-range', {
          start_time: asked.start,
          end_time: asked.end,
          device_name: device,
        }),
      (answer) => {
        setReview(undefined);
        setResult(answer);
        onDeleted();
      },
    );

  const what = review?.stored === undefined ? 'the items' : items(review.stored);
  return (
    <Section id="device-delete" title="Delete a time range">
      <p class="hint">
        Deletes this device's items of the range for good: their search entries and media files too,
        and archived items of the range are marked deleted so no restore brings them back.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          askReview();
        }}
      >
        <div class="field">
          <label for="delete-from">From (local time)</label>
          <input
            id="delete-from"
            type="datetime-local"
            required
            value={from}
            onInput={(event) => {
              setFrom(event.currentTarget.value);
              setReview(undefined);
            }}
          />
        </div>
        <div class="field">
          <label for="delete-to">To (local time, not included)</label>
          <input
            id="delete-to"
            type="datetime-local"
            required
            value={to}
            onInput={(event) => {
              setTo(event.currentTarget.value);
              setReview(undefined);
            }}
          />
        </div>
        <button type="submit" class="secondary" aria-disabled={busy}>
          Review delete
        </button>
      </form>
      {review ? (
        <div class="note warning confirm" role="group" aria-labelledby="delete-confirm-title">
          <h3 id="delete-confirm-title" tabIndex={-1} ref={confirmHeading}>
            Delete {what} of {device} from {formatLocalTime(new Date(review.start))} to{' '}
            {formatLocalTime(new Date(review.end))}?
          </h3>
          <p>
            {review.stored === undefined
              ? 'This token may not search, so the items in the range are not counted here. '
              : `${items(review.stored)} stored in the range now, and any archived items of the range. `}
            This cannot be undone.
          </p>
          <p class="actions">
            <button
              type="button"
              class="danger"
              aria-disabled={busy}
              onClick={() => confirm(review)}
            >
              Delete {what}
            </button>{' '}
            <button type="button" class="secondary" onClick={() => setReview(undefined)}>
              Cancel
            </button>
          </p>
        </div>
      ) : null}
      <div class="answer" role="status">
        {result ? (
          <Fragment>
            <p>{result.message}</p>
            <p class="meta">
              {items(result.items_deleted)} deleted ({formatCount(result.frames_deleted)} screen,{' '}
              {formatCount(result.audio_transcriptions_deleted)} audio),{' '}
              {formatCount(result.media_files_deleted)} media files,{' '}
              {items(result.archived_items_deleted)} in the archive marked deleted.
            </p>
          </Fragment>
        ) : null}
      </div>
      <ErrorNote error={error} />
    </Section>
  );
}

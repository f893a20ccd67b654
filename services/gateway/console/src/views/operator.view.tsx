import type { ListElementsResponse, OperationResult } from '@screenfleet/contracts';
import { Fragment, h } from '../vendor/preact.js';
import { useEffect, useRef, useState } from '../vendor/hooks.js';
import { ApiError } from '../api.js';
import { knownDevices } from '../devices.js';
import { formatCount, formatLocalTime } from '../format.js';
import { msUntilExpiry } from '../operator-listing.js';
import { ErrorNote, Section } from '../ui.js';
import type { ViewProps } from './view-props.js';
import { operatorActions, type ActionTarget } from './operator-actions.js';

interface ListRequest {
  device: string;
  app: string;
  window: string;
  interactableOnly: boolean;
}

interface Listing {
  body: ListElementsResponse;
  /** The device as the listing was asked for ('' = the gateway's default). */
  device: string;
  app: string;
  latencyMs: number;
}

interface Outcome {
  what: string;
  latencyMs: number;
  result?: OperationResult;
  error?: unknown;
}

/**
 * Operator: pick a device and an app, list its elements, pick one, act on it (press a key with
 * modifiers, click, type text: operatorActions). Each answer is shown with its latency,
 * measured here from request to answer. A listing past its snapshot's expiry, or one the agent
 * refused as not current (409), is stale: the view says so and offers to list again.
 */
export function OperatorView({ session }: ViewProps) {
  const bound = session.who.devices;
  const [request, setRequest] = useState<ListRequest>({
    device: bound?.length === 1 ? (bound[0] ?? '') : '',
    app: '',
    window: '',
    interactableOnly: true,
  });
  const [devices, setDevices] = useState<readonly string[]>([]);
  const [listing, setListing] = useState<Listing>();
  const [listError, setListError] = useState<unknown>();
  const [listing409, setListing409] = useState<string>();
  const [listingBusy, setListingBusy] = useState(false);
  const [selected, setSelected] = useState<number>();
  const [actionId, setActionId] = useState(operatorActions[0]?.id ?? '');
  const [outcome, setOutcome] = useState<Outcome>();
  const [acting, setActing] = useState(false);
  const [expired, setExpired] = useState(false);
  const listedHeading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    void knownDevices(session, { online: true }).then(setDevices);
  }, [session]);

  // One timer to the snapshot's expiry: no ticking clock re-renders a 500-row table.
  useEffect(() => {
    setExpired(false);
    if (!listing) return;
    const timer = setTimeout(
      () => setExpired(true),
      Math.max(0, msUntilExpiry(listing.body.cache_info, new Date())),
    );
    return () => clearTimeout(timer);
  }, [listing]);

  const list = (asked: ListRequest) => {
    if (listingBusy) return;
    setListingBusy(true);
    setListError(undefined);
    const started = performance.now();
    session.api
      .post<ListElementsResponse>('/experimental/operator/list-interactable-elements', {
        app_name: asked.app.trim(),
        ...(asked.window.trim() ? { window_name: asked.window.trim() } : {}),
        ...(asked.interactableOnly ? { interactable_only: true } : {}),
        ...(asked.device.trim() ? { device_name: asked.device.trim() } : {}),
      })
      .then(
        (body) => {
          const latencyMs = performance.now() - started;
          setListing({ body, device: asked.device.trim(), app: asked.app.trim(), latencyMs });
          setListing409(undefined);
          setSelected(undefined);
          setOutcome(undefined);
          setListingBusy(false);
          listedHeading.current?.focus();
        },
        (failure: unknown) => {
          setListError(failure);
          setListingBusy(false);
        },
      );
  };

  const stale =
    listing409 ??
    (listing && expired
      ? `its snapshot expired at ${formatLocalTime(new Date(listing.body.cache_info.expires_at))}`
      : undefined);
  const element = listing?.body.elements.find((e) => e.index === selected);
  const target: ActionTarget | undefined =
    listing && element
      ? {
          element,
          cacheId: listing.body.cache_info.cache_id,
          ...(listing.device ? { deviceName: listing.device } : {}),
        }
      : undefined;

  const send = (path: string, body: Record<string, unknown>, what: string) => {
    setActing(true);
    setOutcome(undefined);
    const started = performance.now();
    const done = (result?: OperationResult, error?: unknown) => {
      setOutcome({ what, latencyMs: performance.now() - started, result, error });
      setActing(false);
      // 409: the listing is not the device's current one, or the element changed.
      if (error instanceof ApiError && error.status === 409) setListing409(error.message);
    };
    session.api.post<OperationResult>(path, body).then(
      (result) => done(result),
      (error: unknown) => done(undefined, error),
    );
  };

  const action = operatorActions.find((a) => a.id === actionId) ?? operatorActions[0];

  return (
    <Fragment>
      <h1>Operator</h1>
      <form
        class="list-form"
        onSubmit={(event) => {
          event.preventDefault();
          list(request);
        }}
      >
        <div class="field">
          <label for="operator-device">Device</label>
          <input
            id="operator-device"
            value={request.device}
            onInput={(event) => setRequest({ ...request, device: event.currentTarget.value })}
            list="operator-device-names"
            placeholder="the only agent online"
            aria-describedby="operator-device-hint"
          />
          <datalist id="operator-device-names">
            {devices.map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
          <span id="operator-device-hint" class="hint">
            Empty: the device whose agent is the only one online.
          </span>
        </div>
        <div class="field">
          <label for="operator-app">App</label>
          <input
            id="operator-app"
            required
            value={request.app}
            onInput={(event) => setRequest({ ...request, app: event.currentTarget.value })}
            placeholder="Chromium"
          />
        </div>
        <div class="field">
          <label for="operator-window">Window (optional)</label>
          <input
            id="operator-window"
            value={request.window}
            onInput={(event) => setRequest({ ...request, window: event.currentTarget.value })}
          />
        </div>
        <div class="field check">
          <input
            id="operator-interactable"
            type="checkbox"
            checked={request.interactableOnly}
            onChange={(event) =>
              setRequest({ ...request, interactableOnly: event.currentTarget.checked })
            }
          />
          <label for="operator-interactable">Only elements that take input</label>
        </div>
        <div class="actions">
          <button type="submit" aria-disabled={listingBusy}>
            List elements
          </button>
        </div>
      </form>
      <ErrorNote error={listError} title="Listing failed" />
      {listing ? (
        <section class="listing" aria-labelledby="listing-title">
          <h2 id="listing-title" tabIndex={-1} ref={listedHeading}>
            {formatCount(listing.body.elements.length)} elements of {listing.app}
            {listing.device ? ` on ${listing.device}` : ''}
          </h2>
          <p class="meta">
            Listed at {formatLocalTime(new Date(listing.body.cache_info.timestamp))} in{' '}
            {Math.round(listing.latencyMs)} ms; {formatCount(listing.body.stats.total)} elements in
            the window. Listing <code>{listing.body.cache_info.cache_id}</code>.
          </p>
          {stale ? (
            <div class="note warning" role="alert">
              <p>
                <strong>This listing is stale:</strong> {stale}. Actions on it would be refused.
              </p>
              <button type="button" onClick={() => list(listingRequest(listing, request))}>
                List again
              </button>
            </div>
          ) : null}
          <ElementTable listing={listing} selected={selected} onSelect={setSelected} />
        </section>
      ) : null}
      {target && action ? (
        <Section id="operator-act" title={`Act on element ${target.element.index}`}>
          <p class="meta">
            {target.element.role} “{target.element.text}”
          </p>
          {operatorActions.length > 1 ? (
            <fieldset class="action-choice">
              <legend>Action</legend>
              {operatorActions.map((a) => (
                <span class="check" key={a.id}>
                  <input
                    id={`action-${a.id}`}
                    type="radio"
                    name="operator-action"
                    checked={a.id === action.id}
                    onChange={() => setActionId(a.id)}
                  />
                  <label for={`action-${a.id}`}>{a.label}</label>
                </span>
              ))}
            </fieldset>
          ) : null}
          <action.form target={target} busy={acting || stale !== undefined} send={send} />
          <ActionOutcome outcome={outcome} />
        </Section>
      ) : null}
    </Fragment>
  );
}

/** The request that made `listing`, for List again (the form may have changed since). */
const listingRequest = (listing: Listing, form: ListRequest): ListRequest => ({
  ...form,
  device: listing.device,
  app: listing.app,
});

function ElementTable({
  listing,
  selected,
  onSelect,
}: {
  listing: Listing;
  selected: number | undefined;
  onSelect: (index: number) => void;
}) {
  return (
    <table class="elements">
      <caption>Pick the element to act on</caption>
      <thead>
        <tr>
          <th scope="col">Pick</th>
          <th scope="col">Index</th>
          <th scope="col">Role</th>
          <th scope="col">Name</th>
          <th scope="col">Position (x, y)</th>
          <th scope="col">Size</th>
        </tr>
      </thead>
      <tbody>
        {listing.body.elements.map((e) => (
          <tr
            key={e.index}
            class={e.index === selected ? 'selected' : undefined}
            onClick={() => onSelect(e.index)}
          >
            <td>
              <input
                type="radio"
                name="operator-element"
                id={`element-${e.index}`}
                checked={e.index === selected}
                onChange={() => onSelect(e.index)}
                aria-label={`Element ${e.index}: ${e.role} ${e.text}`}
              />
            </td>
            <td>{e.index}</td>
            <td>{e.role}</td>
            <td>{e.text || <span class="none">(no name)</span>}</td>
            <td>
              {Math.round(e.position.x)}, {Math.round(e.position.y)}
            </td>
            <td>
              {Math.round(e.size.width)} × {Math.round(e.size.height)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ActionOutcome({ outcome }: { outcome: Outcome | undefined }) {
  return (
    <Fragment>
      <div class="outcome" role="status">
        {outcome ? (
          <p>
            <strong>
              {outcome.result ? (outcome.result.success ? 'Done' : 'Not done') : 'Refused'}
            </strong>{' '}
            ({outcome.what}, answered in{' '}
            <span class="latency">{Math.round(outcome.latencyMs)} ms</span>)
            {outcome.result ? `: ${outcome.result.message}` : null}
          </p>
        ) : null}
      </div>
      <ErrorNote error={outcome?.error} />
    </Fragment>
  );
}

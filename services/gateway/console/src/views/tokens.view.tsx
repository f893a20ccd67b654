import type {
  EnrolmentCodeCreated,
  EnrolmentCodeList,
  EnrolmentCodeView,
  Scope,
  TokenCreated,
  TokenList,
  TokenView,
} from '@screenfleet/contracts';
import { Fragment, h, type ComponentChildren } from '../vendor/preact.js';
import { useEffect, useRef, useState } from '../vendor/hooks.js';
import { formatCount } from '../format.js';
import type { Session } from '../session.js';
import {
  codeRequest,
  credentialState,
  listQuery,
  scopeHints,
  tokenRequest,
  tokenScopes,
} from '../token-forms.js';
import { ErrorNote, Instant, Section, useNow } from '../ui.js';
import type { ViewProps } from './view-props.js';

/**
 * Tokens (tokens:admin): the stored tokens and enrolment codes (GET /tokens, GET
 * /enrolment-codes), a form to create each, and revoke with a confirmation. A new secret is
 * shown once, in this view's state only: never in storage, the address or a log, and gone when
 * dismissed or when the view closes.
 */
export function TokensView({ session }: ViewProps) {
  return (
    <Fragment>
      <h1>Tokens</h1>
      <p class="hint">
        Tokens and enrolment codes stored by the gateway. Tokens of GATEWAY_TOKENS and the local
        token are not stored, so not listed here.
      </p>
      <TokensPart session={session} />
      <CodesPart session={session} />
    </Fragment>
  );
}

/** A list's state: its items, the last error, and whether revoked ones are asked for. */
function useList<T>(load: (includeRevoked: boolean) => Promise<T[]>) {
  const [items, setItems] = useState<T[]>();
  const [error, setError] = useState<unknown>();
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const [runs, setRuns] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    load(includeRevoked).then(
      (answer) => {
        if (ticket !== latest.current) return;
        setItems(answer);
        setError(undefined);
      },
      (failure: unknown) => {
        if (ticket !== latest.current) return;
        setError(failure);
      },
    );
    return () => {
      latest.current += 1; // an answer that comes after this is for nobody
    };
  }, [includeRevoked, runs]);
  return {
    items,
    error,
    includeRevoked,
    setIncludeRevoked,
    reload: () => setRuns((n) => n + 1),
  };
}

/** One request at a time with its error: a create or a revoke. */
function useSend() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const send = <T,>(request: () => Promise<T>, done: (answer: T) => void) => {
    if (busy) return;
    setBusy(true);
    setError(undefined);
    request().then(
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
  return { busy, error, send, clearError: () => setError(undefined) };
}

function TokensPart({ session }: { session: Session }) {
  const list = useList((includeRevoked) =>
    session.api.get<TokenList>('/tokens', listQuery(includeRevoked)).then((a) => a.tokens),
  );
  const [created, setCreated] = useState<TokenCreated>();
  return (
    <Fragment>
      <Section id="token-create" title="Create a token">
        <TokenForm
          session={session}
          onCreated={(answer) => {
            setCreated(answer);
            list.reload();
          }}
        />
        {created ? (
          <SecretBox
            what="token"
            name={created.token.name}
            secret={created.secret}
            use="Use it as Authorization: Bearer <secret>."
            onDone={() => setCreated(undefined)}
          />
        ) : null}
      </Section>
      <Section id="token-list" title="Tokens">
        <RevokedToggle id="tokens-revoked" list={list} what="tokens" />
        <ErrorNote error={list.error} title="The tokens are unavailable" />
        {list.items ? (
          <TokenTable session={session} tokens={list.items} onRevoked={list.reload} />
        ) : null}
      </Section>
    </Fragment>
  );
}

function CodesPart({ session }: { session: Session }) {
  const list = useList((includeRevoked) =>
    session.api
      .get<EnrolmentCodeList>('/enrolment-codes', listQuery(includeRevoked))
      .then((a) => a.codes),
  );
  const [created, setCreated] = useState<EnrolmentCodeCreated>();
  return (
    <Fragment>
      <Section id="code-create" title="Create an enrolment code">
        <p class="hint">
          Desktops trade a code for a token of their own (POST /enroll), bound to their device name,
          while it has uses left.
        </p>
        <CodeForm
          session={session}
          onCreated={(answer) => {
            setCreated(answer);
            list.reload();
          }}
        />
        {created ? (
          <SecretBox
            what="enrolment code"
            name={created.code.name}
            secret={created.secret}
            use="Desktops send it to POST /enroll."
            onDone={() => setCreated(undefined)}
          />
        ) : null}
      </Section>
      <Section id="code-list" title="Enrolment codes">
        <RevokedToggle id="codes-revoked" list={list} what="codes" />
        <ErrorNote error={list.error} title="The enrolment codes are unavailable" />
        {list.items ? (
          <CodeTable session={session} codes={list.items} onRevoked={list.reload} />
        ) : null}
      </Section>
    </Fragment>
  );
}

function RevokedToggle({
  id,
  list,
  what,
}: {
  id: string;
  list: { includeRevoked: boolean; setIncludeRevoked: (on: boolean) => void };
  what: string;
}) {
  return (
    <div class="field check">
      <input
        id={id}
        type="checkbox"
        checked={list.includeRevoked}
        onChange={(event) => list.setIncludeRevoked(event.currentTarget.checked)}
      />
      <label for={id}>Show revoked {what}</label>
    </div>
  );
}

/**
 * The secret of what was just created, shown this once: the gateway keeps only its hash. It
 * lives in this component's state and nowhere else; the copy button puts it on the clipboard.
 */
function SecretBox({
  what,
  name,
  secret,
  use,
  onDone,
}: {
  what: string;
  name: string;
  secret: string;
  use: string;
  onDone: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string>();
  useEffect(() => heading.current?.focus(), [secret]);
  const id = `secret-${what.replace(/\W+/g, '-')}`;
  const copy = () => {
    navigator.clipboard.writeText(secret).then(
      () => setCopied('Copied to the clipboard.'),
      () => {
        // No clipboard (a page not on loopback or HTTPS): select it for Ctrl+C.
        field.current?.select();
        setCopied('Selected: press Ctrl+C (Cmd+C) to copy it.');
      },
    );
  };
  return (
    <div class="note warning secret" role="group" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} tabIndex={-1} ref={heading}>
        The new {what} “{name}”: copy it now
      </h3>
      <p>
        <strong>It is not shown again.</strong> The gateway keeps only its hash, and this page does
        not keep it either. {use}
      </p>
      <div class="secret-value">
        <label for={id} class="visually-hidden">
          The {what}'s secret
        </label>
        <input
          id={id}
          ref={field}
          readOnly
          value={secret}
          spellcheck={false}
          autocomplete="off"
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status">{copied ?? ''}</p>
      <p class="actions">
        <button type="button" class="secondary" onClick={onDone}>
          I have copied it: hide it
        </button>
      </p>
    </div>
  );
}

function ScopeChecks({
  id,
  scopes,
  onChange,
}: {
  id: string;
  scopes: readonly Scope[];
  onChange: (scopes: Scope[]) => void;
}) {
  return (
    <fieldset class="scopes">
      <legend>Scopes</legend>
      {tokenScopes.map((scope) => (
        <div class="field check" key={scope}>
          <input
            id={`${id}-${scope}`}
            type="checkbox"
            checked={scopes.includes(scope)}
            onChange={(event) =>
              onChange(
                event.currentTarget.checked
                  ? [...scopes, scope]
                  : scopes.filter((s) => s !== scope),
              )
            }
          />
          <label for={`${id}-${scope}`}>
            <code>{scope}</code> <span class="hint">{scopeHints[scope]}</span>
          </label>
        </div>
      ))}
    </fieldset>
  );
}

/** A field's label, its input (given) and a hint the input names as its description. */
function Field({
  id,
  label,
  hint,
  children,
}: {
  id: string;
  label: string;
  hint?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {hint ? (
        <span id={`${id}-hint`} class="hint">
          {hint}
        </span>
      ) : null}
    </div>
  );
}

/** An input's value as typed, for a setter. */
const typed = (set: (value: string) => void) => (event: { currentTarget: { value: string } }) =>
  set(event.currentTarget.value);

function TokenForm({
  session,
  onCreated,
}: {
  session: Session;
  onCreated: (answer: TokenCreated) => void;
}) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [devices, setDevices] = useState('');
  const [expires, setExpires] = useState('');
  const request = useSend();
  return (
    <Fragment>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const body = tokenRequest({ name, scopes, devices, expires });
          request.send(
            () => session.api.post<TokenCreated>('/tokens', body),
            (answer) => {
              setName('');
              setScopes([]);
              setDevices('');
              setExpires('');
              onCreated(answer);
            },
          );
        }}
      >
        <Field id="token-name" label="Name">
          <input id="token-name" value={name} onInput={typed(setName)} required />
        </Field>
        <ScopeChecks id="token-scope" scopes={scopes} onChange={setScopes} />
        <Field
          id="token-devices"
          label="Devices (optional)"
          hint="Device names, separated by commas: the token acts for these only."
        >
          <input
            id="token-devices"
            value={devices}
            onInput={typed(setDevices)}
            placeholder="any device"
            aria-describedby="token-devices-hint"
          />
        </Field>
        <Field
          id="token-expires"
          label="Expires (local time, optional)"
          hint="Empty: never expires."
        >
          <input
            id="token-expires"
            type="datetime-local"
            value={expires}
            onInput={typed(setExpires)}
            aria-describedby="token-expires-hint"
          />
        </Field>
        <button type="submit" aria-disabled={request.busy}>
          Create token
        </button>
      </form>
      <ErrorNote error={request.error} title="The token was not created" />
    </Fragment>
  );
}

function CodeForm({
  session,
  onCreated,
}: {
  session: Session;
  onCreated: (answer: EnrolmentCodeCreated) => void;
}) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['ingest']);
  const [devicePattern, setDevicePattern] = useState('');
  const [uses, setUses] = useState('');
  const [expires, setExpires] = useState('');
  const request = useSend();
  return (
    <Fragment>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const body = codeRequest({ name, scopes, devicePattern, uses, expires });
          request.send(
            () => session.api.post<EnrolmentCodeCreated>('/enrolment-codes', body),
            (answer) => {
              setName('');
              setDevicePattern('');
              setUses('');
              setExpires('');
              onCreated(answer);
            },
          );
        }}
      >
        <Field id="code-name" label="Name">
          <input id="code-name" value={name} onInput={typed(setName)} required />
        </Field>
        <ScopeChecks id="code-scope" scopes={scopes} onChange={setScopes} />
        <Field
          id="code-pattern"
          label="Device names it enrols"
          hint="The whole name: * stands for any characters, ? for one (lab-* takes lab-17)."
        >
          <input
            id="code-pattern"
            value={devicePattern}
            onInput={typed(setDevicePattern)}
            required
            placeholder="lab-*"
            aria-describedby="code-pattern-hint"
          />
        </Field>
        <Field id="code-uses" label="Uses" hint="How many desktops may enrol with it.">
          <input
            id="code-uses"
            type="number"
            inputMode="numeric"
            min={1}
            step={1}
            value={uses}
            onInput={typed(setUses)}
            required
            aria-describedby="code-uses-hint"
          />
        </Field>
        <Field
          id="code-expires"
          label="Expires (local time, optional)"
          hint="Empty: never expires. A code is a secret too: give it an end."
        >
          <input
            id="code-expires"
            type="datetime-local"
            value={expires}
            onInput={typed(setExpires)}
            aria-describedby="code-expires-hint"
          />
        </Field>
        <button type="submit" aria-disabled={request.busy}>
          Create enrolment code
        </button>
      </form>
      <ErrorNote error={request.error} title="The enrolment code was not created" />
    </Fragment>
  );
}

/** The row a revoke was asked for, waiting for its confirmation. */
interface Pending {
  id: string;
  name: string;
}

/**
 * Revoke with a confirmation that names what goes: the button on a row asks, the question
 * below the table sends DELETE; the answer reloads the list, an error is shown as it came.
 */
function useRevoke(session: Session, base: string, onRevoked: () => void) {
  const [pending, setPending] = useState<Pending>();
  const [done, setDone] = useState<string>();
  const request = useSend();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (pending) heading.current?.focus();
  }, [pending?.id]);
  const ask = (item: Pending) => {
    setPending(item);
    setDone(undefined);
    request.clearError();
  };
  const confirm = (item: Pending) =>
    request.send(
      () => session.api.delete(`${base}/${encodeURIComponent(item.id)}`),
      () => {
        setPending(undefined);
        setDone(`Revoked “${item.name}” (${item.id}).`);
        onRevoked();
      },
    );
  return { pending, ask, confirm, cancel: () => setPending(undefined), done, request, heading };
}

function RevokeQuestion({
  revoke,
  what,
  consequence,
}: {
  revoke: ReturnType<typeof useRevoke>;
  what: string;
  consequence: string;
}) {
  const { pending } = revoke;
  const titleId = `revoke-${what.replace(/\W+/g, '-')}-title`;
  return (
    <Fragment>
      {pending ? (
        <div class="note warning confirm" role="group" aria-labelledby={titleId}>
          <h3 id={titleId} tabIndex={-1} ref={revoke.heading}>
            Revoke the {what} “{pending.name}” ({pending.id})?
          </h3>
          <p>{consequence} This cannot be undone.</p>
          <p class="actions">
            <button
              type="button"
              class="danger"
              aria-disabled={revoke.request.busy}
              onClick={() => revoke.confirm(pending)}
            >
              Revoke “{pending.name}”
            </button>{' '}
            <button type="button" class="secondary" onClick={revoke.cancel}>
              Cancel
            </button>
          </p>
        </div>
      ) : null}
      <p class="answer" role="status">
        {revoke.done ?? ''}
      </p>
      <ErrorNote error={revoke.request.error} title="Not revoked" />
    </Fragment>
  );
}

function TokenTable({
  session,
  tokens,
  onRevoked,
}: {
  session: Session;
  tokens: TokenView[];
  onRevoked: () => void;
}) {
  const now = useNow(30_000);
  const revoke = useRevoke(session, '/tokens', onRevoked);
  return (
    <Fragment>
      <table class="records">
        <caption>
          {formatCount(tokens.length)} {tokens.length === 1 ? 'token' : 'tokens'}, oldest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Id</th>
            <th scope="col">Scopes</th>
            <th scope="col">Devices</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">Revoked</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((token) => {
            const state = credentialState(token, now);
            return (
              <tr key={token.id} data-id={token.id} class={state}>
                <th scope="row">{token.name}</th>
                <td>
                  <code>{token.id}</code>
                </td>
                <td>{token.scopes.join(', ')}</td>
                <td>{token.devices ? token.devices.join(', ') : <span class="none">any</span>}</td>
                <td>
                  <Instant iso={token.created_at} now={now} none="" />
                </td>
                <td>
                  <Instant iso={token.expires_at} now={now} none="never" />
                  {state === 'expired' ? <strong> expired</strong> : null}
                </td>
                <td>
                  <Instant iso={token.last_used_at} now={now} none="never" />
                </td>
                <td>
                  <Instant iso={token.revoked_at} now={now} none="no" />
                </td>
                <td>
                  {state === 'revoked' ? null : (
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`Revoke token ${token.name}`}
                      onClick={() => revoke.ask({ id: token.id, name: token.name })}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {tokens.length === 0 ? <p class="none">No tokens stored.</p> : null}
      <RevokeQuestion
        revoke={revoke}
        what="token"
        consequence="Every gateway refuses it within a second; anything using it stops working."
      />
    </Fragment>
  );
}

function CodeTable({
  session,
  codes,
  onRevoked,
}: {
  session: Session;
  codes: EnrolmentCodeView[];
  onRevoked: () => void;
}) {
  const now = useNow(30_000);
  const revoke = useRevoke(session, '/enrolment-codes', onRevoked);
  return (
    <Fragment>
      <table class="records">
        <caption>
          {formatCount(codes.length)} enrolment {codes.length === 1 ? 'code' : 'codes'}, oldest
          first
        </caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Id</th>
            <th scope="col">Scopes</th>
            <th scope="col">Device pattern</th>
            <th scope="col">Uses left</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Revoked</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {codes.map((code) => {
            const state = credentialState(code, now);
            return (
              <tr key={code.id} data-id={code.id} class={state}>
                <th scope="row">{code.name}</th>
                <td>
                  <code>{code.id}</code>
                </td>
                <td>{code.scopes.join(', ')}</td>
                <td>
                  <code>{code.device_pattern}</code>
                </td>
                <td>
                  {formatCount(code.uses_left)} of {formatCount(code.uses)}
                </td>
                <td>
                  <Instant iso={code.created_at} now={now} none="" />
                </td>
                <td>
                  <Instant iso={code.expires_at} now={now} none="never" />
                  {state === 'expired' ? <strong> expired</strong> : null}
                </td>
                <td>
                  <Instant iso={code.revoked_at} now={now} none="no" />
                </td>
                <td>
                  {state === 'revoked' ? null : (
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`Revoke enrolment code ${code.name}`}
                      onClick={() => revoke.ask({ id: code.id, name: code.name })}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {codes.length === 0 ? <p class="none">No enrolment codes.</p> : null}
      <RevokeQuestion
        revoke={revoke}
        what="enrolment code"
        consequence="It enrols no more desktops; the tokens it made stay valid (revoke them one by one)."
      />
    </Fragment>
  );
}

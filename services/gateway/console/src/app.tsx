import { Fragment, h } from './vendor/preact.js';
import { useEffect, useRef, useState } from './vendor/hooks.js';
import { hashFor, parseHash, type Route } from './route.js';
import { can, forgetToken, openSession, storedToken, type Session } from './session.js';
import { ErrorNote } from './ui.js';
import { consoleViews, type ConsoleView } from './views.js';
import { SignInView } from './views/sign-in.view.js';

type State =
  | { kind: 'starting' }
  | {
      kind: 'signed-out';
      error?: unknown;
      notice?: string;
      /** The loopback grant's session, to go back to without a token. */
      loopback?: Session;
    }
  | { kind: 'signed-in'; session: Session };

/**
 * The console's shell: who it acts as (a token, or the loopback grant), the views that token
 * may use, and the one the hash names.
 */
export function App() {
  const [state, setState] = useState<State>({ kind: 'starting' });
  const [route, setRoute] = useState<Route>(() => parseHash(location.hash));

  useEffect(() => {
    const follow = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);

  const expired = () => {
    forgetToken();
    setState({ kind: 'signed-out', notice: 'The gateway no longer accepts this token.' });
  };

  /** The stored token's session, else the loopback grant's, else the sign-in form. */
  const start = async () => {
    const stored = storedToken();
    try {
      const session = await openSession(stored, expired);
      setState(session ? { kind: 'signed-in', session } : { kind: 'signed-out' });
    } catch (error) {
      if (stored) forgetToken();
      setState({ kind: 'signed-out', error });
    }
  };
  useEffect(() => {
    void start();
  }, []);

  const signIn = async (token: string) => {
    const loopback = state.kind === 'signed-out' ? state.loopback : undefined;
    try {
      const session = await openSession(token, expired);
      if (session) setState({ kind: 'signed-in', session });
    } catch (error) {
      setState({ kind: 'signed-out', error, ...(loopback ? { loopback } : {}) });
    }
  };

  switch (state.kind) {
    case 'starting':
      return (
        <main id="main">
          <p role="status">Connecting to the gateway…</p>
        </main>
      );
    case 'signed-out':
      return (
        <Fragment>
          <header class="top">
            <span class="brand">screenfleet console</span>
          </header>
          <main id="main">
            <SignInView
              onSignIn={signIn}
              error={state.error}
              {...(state.notice ? { notice: state.notice } : {})}
              {...(state.loopback
                ? { onCancel: () => setState({ kind: 'signed-in', session: state.loopback! }) }
                : {})}
            />
          </main>
        </Fragment>
      );
    case 'signed-in':
      return (
        <Shell
          session={state.session}
          route={route}
          onSignOut={() => {
            forgetToken();
            setState({ kind: 'starting' });
            void start();
          }}
          onUseToken={() => setState({ kind: 'signed-out', loopback: state.session })}
        />
      );
  }
}

function Shell({
  session,
  route,
  onSignOut,
  onUseToken,
}: {
  session: Session;
  route: Route;
  onSignOut: () => void;
  onUseToken: () => void;
}) {
  const offered = consoleViews.filter((view) => can(session, view.scope));
  const named = consoleViews.find((view) => view.id === route.view);
  const view: ConsoleView | undefined = route.view ? named : offered[0];
  const allowed = view !== undefined && can(session, view.scope);
  const heading = useRef<HTMLElement>(null);
  const shownView = useRef<string | undefined>(undefined);

  useEffect(() => {
    document.title = `${view?.title ?? 'Console'} · screenfleet`;
    // A new view takes the focus to its content, as a new page would; a new query does not.
    if (shownView.current !== undefined && shownView.current !== view?.id) {
      heading.current?.focus();
    }
    shownView.current = view?.id;
  }, [view?.id]);

  const { who } = session;
  return (
    <Fragment>
      <header class="top">
        <span class="brand">screenfleet console</span>
        <nav aria-label="Views">
          <ul>
            {offered
              .filter((v) => v.nav)
              .map((v) => (
                <li key={v.id}>
                  <a href={hashFor(v.id)} aria-current={v.id === view?.id ? 'page' : undefined}>
                    {v.title}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <div class="who">
          {who.grant === 'loopback' ? (
            <Fragment>
              <span>No token (loopback grant)</span>
              <button type="button" class="secondary" onClick={onUseToken}>
                Use a token
              </button>
            </Fragment>
          ) : (
            <Fragment>
              <span>
                Token <strong>{who.token_id}</strong>
              </span>
              <button type="button" class="secondary" onClick={onSignOut}>
                Sign out
              </button>
            </Fragment>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1} ref={heading}>
        {view && allowed ? (
          <view.component session={session} route={route} go={(hash) => (location.hash = hash)} />
        ) : (
          <NotOffered session={session} view={view} route={route} />
        )}
      </main>
    </Fragment>
  );
}

function NotOffered({
  session,
  view,
  route,
}: {
  session: Session;
  view: ConsoleView | undefined;
  route: Route;
}) {
  const scopes = session.who.scopes.join(', ') || 'none';
  const message = !view
    ? route.view
      ? `There is no view "${route.view}".`
      : 'This token holds no scope the console uses.'
    : `The ${view.title} view needs the ${view.scope} scope, which this token lacks.`;
  return (
    <Fragment>
      <h1>Not available</h1>
      <ErrorNote error={new Error(`${message} Its scopes: ${scopes}.`)} />
    </Fragment>
  );
}

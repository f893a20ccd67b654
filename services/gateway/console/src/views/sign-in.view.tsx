import { h } from '../vendor/preact.js';
import { useState } from '../vendor/hooks.js';
import { ErrorNote } from '../ui.js';

/**
 * Sign-in: paste a token. It is kept in this tab's sessionStorage only after the gateway has
 * accepted it, and sent as a bearer header; never in a URL, never as a cookie.
 */
export function SignInView({
  onSignIn,
  error,
  notice,
  onCancel,
}: {
  onSignIn: (token: string) => Promise<void>;
  error: unknown;
  notice?: string;
  /** Back to the loopback grant, when the page has one. */
  onCancel?: () => void;
}) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <section class="sign-in panel" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      {notice ? <p class="note">{notice}</p> : null}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (busy) return;
          setBusy(true);
          void onSignIn(token.trim()).finally(() => setBusy(false));
        }}
      >
        <div class="field wide">
          <label for="sign-in-token">Access token</label>
          <input
            id="sign-in-token"
            type="password"
            required
            autocomplete="off"
            spellcheck={false}
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
            aria-describedby="sign-in-hint"
          />
          <span id="sign-in-hint" class="hint">
            A token from GATEWAY_TOKENS, or the one the gateway printed at its first start (kept in
            its data directory). It stays in this browser tab and goes only to this gateway, as an
            Authorization header.
          </span>
        </div>
        <div class="actions">
          <button type="submit" aria-disabled={busy}>
            Sign in
          </button>
          {onCancel ? (
            <button type="button" class="secondary" onClick={onCancel}>
              Go on without a token
            </button>
          ) : null}
        </div>
      </form>
      <ErrorNote error={error} title="Not signed in" />
    </section>
  );
}

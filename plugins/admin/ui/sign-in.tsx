import { useState } from "preact/hooks";
import { checkKey, describe } from "./api.js";
import { signIn } from "./session.js";

/** Asks for the API key and checks it (`GET /admin/key-check`; a wrong one counts toward the lockout). */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await checkKey(key.trim());
      signIn(key.trim());
      onSignedIn();
    } catch (failure) {
      setError(describe(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <form onSubmit={submit}>
        <h1>Vellum</h1>
        {/* For password managers, which keep a secret under a user name. */}
        <input type="text" autocomplete="username" value="Vellum API key" readOnly hidden />
        <label for="key">API key</label>
        <input
          id="key"
          type="password"
          autocomplete="current-password"
          required
          value={key}
          onInput={(event) => setKey(event.currentTarget.value)}
        />
        <p class="hint">
          The key of <code>SERVICE_API_KEY</code>, or the one printed on the first start. It stays in this tab.
        </p>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy || key.trim() === ""}>
          {busy ? "Checking…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}

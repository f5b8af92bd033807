import { useEffect, useState } from "preact/hooks";
import { describe, type OperatorAction, operatorActions, runAction } from "./api.js";

/** The operator actions of the installed plugins, read once; an error says why there are none. */
export function useOperatorActions(): { actions: OperatorAction[]; error?: string } {
  const [state, setState] = useState<{ actions: OperatorAction[]; error?: string }>({ actions: [] });
  useEffect(() => {
    operatorActions()
      .then((actions) => setState({ actions }))
      .catch((failure: unknown) => setState({ actions: [], error: describe(failure) }));
  }, []);
  return state;
}

/** An answer in one line: its JSON, cut short. */
const oneLine = (body: unknown) => {
  const text = body === undefined ? "done" : JSON.stringify(body);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};

/** Buttons for `actions`; each runs its route with the key (asking first when it says to) and shows the answer. */
export function ActionButtons({ actions, onDone }: { actions: OperatorAction[]; onDone: () => void }) {
  const [busy, setBusy] = useState<string>();
  const [outcome, setOutcome] = useState<{ label: string; text: string; failed: boolean }>();
  if (actions.length === 0) return null;
  const run = async (action: OperatorAction) => {
    if (action.confirm && !confirm(action.confirm)) return;
    setBusy(action.label);
    setOutcome(undefined);
    try {
      setOutcome({ label: action.label, text: oneLine(await runAction(action)), failed: false });
    } catch (failure) {
      setOutcome({ label: action.label, text: describe(failure), failed: true });
    } finally {
      setBusy(undefined);
      onDone();
    }
  };
  return (
    <div class="actions-list">
      {actions.map((action) => (
        <button
          type="button"
          key={`${action.method} ${action.path}`}
          title={action.summary ?? undefined}
          disabled={busy !== undefined}
          onClick={() => void run(action)}
        >
          {busy === action.label ? "Working…" : action.label}
        </button>
      ))}
      {outcome && (
        <p class={outcome.failed ? "error" : "notice"} role="status">
          {outcome.label}: <code>{outcome.text}</code>
        </p>
      )}
    </div>
  );
}

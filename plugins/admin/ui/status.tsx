import { useEffect, useState } from "preact/hooks";
import { ActionButtons, useOperatorActions } from "./actions.js";
import { probe } from "./api.js";
import { type Dependencies, type Dependency, needsAttention, sayOf } from "./health.js";

interface Overview {
  status: string;
  version: string;
  uptime_seconds: number;
}

const duration = (seconds: number) => {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min`;
};

/** The plain values a component reports besides its status, one per line. */
function Details({ dependency }: { dependency: Dependency }) {
  const rows = Object.entries(dependency).filter(
    ([name, value]) =>
      name !== "status" &&
      name !== "summary" &&
      value !== null &&
      ["string", "number", "boolean"].includes(typeof value),
  );
  if (rows.length === 0) return null;
  return (
    <dl>
      {rows.map(([name, value]) => (
        <div key={name}>
          <dt>{name.replace(/_/g, " ")}</dt>
          <dd>{String(value)}</dd>
        </div>
      ))}
    </dl>
  );
}

interface StatusProps {
  health: Dependencies | undefined;
  /** How many times the health was asked for again on demand. */
  checks: number;
  onRecheck: () => void;
}

/** The service's health: its version and uptime, and every component's state and report. */
export function Status({ health, checks, onRecheck }: StatusProps) {
  const [overview, setOverview] = useState<Overview>();
  const operator = useOperatorActions();
  const named = new Set(Object.keys(health?.dependencies ?? {}));
  const unplaced = operator.actions.filter((action) => action.component === null || !named.has(action.component));
  useEffect(() => {
    void probe<Overview>("/health").then(setOverview);
  }, [checks]);
  return (
    <section>
      <div class="heading">
        <h1>Status</h1>
        <button type="button" onClick={onRecheck}>
          Refresh
        </button>
      </div>
      {overview && (
        <p>
          <span class={`state ${overview.status}`}>{overview.status}</span> Vellum {overview.version}, up{" "}
          {duration(overview.uptime_seconds)}
        </p>
      )}
      {health ? (
        <ul class="components">
          {Object.entries(health.dependencies).map(([name, dependency]) => (
            <li key={name} class={needsAttention(dependency) ? "attention" : undefined}>
              <h2>
                {name} <span class={`state ${dependency.status}`}>{dependency.status}</span>
              </h2>
              {typeof dependency.summary === "string" && <p>{sayOf(dependency)}</p>}
              <Details dependency={dependency} />
              <ActionButtons
                actions={operator.actions.filter((action) => action.component === name)}
                onDone={onRecheck}
              />
            </li>
          ))}
        </ul>
      ) : (
        <p class="hint">Loading…</p>
      )}
      {unplaced.length > 0 && (
        <>
          <h2>Other actions</h2>
          <ActionButtons actions={unplaced} onDone={onRecheck} />
        </>
      )}
      {operator.error && (
        <p class="error" role="alert">
          Operator actions could not be listed: {operator.error}
        </p>
      )}
    </section>
  );
}

import { useEffect, useState } from "preact/hooks";
import { probe } from "./api.js";

/** A component of `/health/dependencies`: its status and what it reports besides. */
export type Dependency = { status: string; summary?: string } & Record<string, unknown>;

export interface Dependencies {
  status: string;
  dependencies: Record<string, Dependency>;
}

/** States that need no one's attention. */
const FINE = new Set(["ok", "absent", "disabled"]);

export const needsAttention = (dependency: Dependency) => !FINE.has(dependency.status);

/** What to say of a component in one line: its own summary when it gives one, else its status. */
export const sayOf = (dependency: Dependency) =>
  typeof dependency.summary === "string" ? dependency.summary : dependency.status;

/** `/health/dependencies`, read now, every `everyMs`, and again when `checks` changes; undefined until read. */
export function useDependencies(everyMs: number, checks: number): Dependencies | undefined {
  const [dependencies, setDependencies] = useState<Dependencies>();
  useEffect(() => {
    let live = true;
    const read = async () => {
      const body = await probe<Dependencies>("/health/dependencies");
      if (live && body?.dependencies) setDependencies(body);
    };
    void read();
    const timer = setInterval(read, everyMs);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [everyMs, checks]);
  return dependencies;
}

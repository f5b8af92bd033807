import type { ComponentReport, EthicsClaims, RegisteredComponent } from "@vellum/core";
import { type FailureLog, withDeadline } from "./state.js";

/** One registered component's answer, as the routes use it. */
export interface ComponentResult {
  state: ComponentReport["state"];
  detail: Record<string, unknown>;
  /** The claims it made; none when its check failed. */
  ethics: EthicsClaims;
}

/** The registered components' answers by name, in registration order. */
export type ComponentResults = ReadonlyMap<string, ComponentResult>;

const STATES = new Set<unknown>(["ok", "degraded", "unavailable"]);
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Runs one component's check within `timeoutMs`. A check that throws, does not answer in time or
 * answers with an unknown state makes the component `unavailable`; the cause goes to the log only.
 */
export async function checkComponent(
  component: RegisteredComponent,
  timeoutMs: number,
  log: FailureLog,
): Promise<ComponentResult> {
  const what = `component ${component.name}`;
  try {
    const report = await withDeadline(
      Promise.resolve().then(() => component.check()),
      timeoutMs,
      what,
    );
    if (!STATES.has(report?.state)) throw new Error(`${what} answered with an unknown state`);
    log.passed(what);
    return {
      state: report.state,
      detail: isRecord(report.detail) ? report.detail : {},
      ethics: isRecord(report.ethics) ? report.ethics : {},
    };
  } catch (error) {
    log.failed(what, error);
    return { state: "unavailable", detail: {}, ethics: {} };
  }
}

/** Runs the checks of `components` side by side, each within its own deadline. */
export async function checkComponents(
  components: readonly RegisteredComponent[],
  timeoutMs: number,
  log: FailureLog,
): Promise<ComponentResults> {
  const results = await Promise.all(components.map((c) => checkComponent(c, timeoutMs, log)));
  return new Map(components.map((c, i) => [c.name, results[i] as ComponentResult]));
}

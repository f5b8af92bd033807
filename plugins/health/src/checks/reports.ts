import type { HealthCheckResult, VellumPluginContext } from "@vellum/core";
import { type ComponentState, type FailureLog, withDeadline, worst } from "./state.js";

export interface ReportedComponent {
  state: Exclude<ComponentState, "absent">;
  detail: Record<string, unknown>;
}

export type Reports = ReadonlyMap<string, ReportedComponent>;

const REPORTABLE = new Set(["ok", "degraded", "unavailable"]);

function normalize(check: HealthCheckResult): ReportedComponent["state"] {
  if (typeof check.state === "string" && REPORTABLE.has(check.state)) {
    return check.state === "ok" && check.ok !== true ? "unavailable" : check.state;
  }
  return check.ok === true ? "ok" : "unavailable";
}

/**
 * Asks every plugin for its checks through the parallel `health:check` hook and keeps what
 * arrived within the deadline. Several reports under one name merge to the worst state. A
 * report that claims `ok` with `ok: false` counts as unavailable.
 */
export async function collectReports(
  ctx: VellumPluginContext<object>,
  timeoutMs: number,
  log: FailureLog,
): Promise<Reports> {
  const checks: HealthCheckResult[] = [];
  await withDeadline(ctx.hooks.callHookParallel("health:check", { checks }), timeoutMs, "health:check").then(
    () => log.passed("health:check"),
    (error: unknown) => log.failed("health:check", error),
  );
  const reports = new Map<string, ReportedComponent>();
  for (const check of [...checks]) {
    if (typeof check?.name !== "string" || check.name === "") continue;
    const state = normalize(check);
    const detail = check.detail && typeof check.detail === "object" ? check.detail : {};
    const previous = reports.get(check.name);
    reports.set(check.name, {
      state: previous ? (worst(previous.state, state) as ReportedComponent["state"]) : state,
      detail: { ...previous?.detail, ...detail },
    });
  }
  return reports;
}

/** A reported component, or `absent` when no installed plugin reports it. */
export function reported(reports: Reports, name: string): { state: ComponentState; detail: Record<string, unknown> } {
  return reports.get(name) ?? { state: "absent", detail: {} };
}

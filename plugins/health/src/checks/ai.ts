import type { RouteRecord } from "@vellum/core";
import type { ReportedComponent } from "./reports.js";

export interface AiInput {
  features: ReadonlySet<string>;
  routes: readonly RouteRecord[];
  /** What a plugin reported for `ai` through `health:check`, if any. */
  report: ReportedComponent | undefined;
}

/**
 * `disabled` unless the `ai` feature flag is on. With the flag on: the state an AI plugin reports,
 * else `ok` when AI routes are being served, else `unavailable` (the flag is on but nothing serves it).
 */
export function ai(input: AiInput) {
  const features = [...input.features].sort();
  if (!input.features.has("ai")) return { status: "disabled" as const, features, endpoints: [] };
  const endpoints = input.routes.filter((r) => r.meta.feature === "ai").map((r) => `${r.method} ${r.path}`);
  const status = input.report?.state ?? (endpoints.length > 0 ? "ok" : "unavailable");
  return { status, features, endpoints, ...(input.report ? { detail: input.report.detail } : {}) };
}

import type { RouteRecord } from "@vellum/core";
import type { ComponentResult } from "./components.js";

export interface AiInput {
  features: ReadonlySet<string>;
  routes: readonly RouteRecord[];
  /** The answer of the component registered as `ai`, if any. */
  component: ComponentResult | undefined;
}

/**
 * `disabled` unless the `ai` feature flag is on. With the flag on: the state of the `ai`
 * component, else `ok` when AI routes are being served, else `unavailable` (the flag is on but
 * nothing serves it).
 */
export function ai(input: AiInput) {
  const features = [...input.features].sort();
  if (!input.features.has("ai")) return { status: "disabled" as const, features, endpoints: [] };
  const endpoints = input.routes.filter((r) => r.meta.feature === "ai").map((r) => `${r.method} ${r.path}`);
  const status = input.component?.state ?? (endpoints.length > 0 ? "ok" : "unavailable");
  return { status, features, endpoints, ...(input.component ? { detail: input.component.detail } : {}) };
}

import type { KernelInfo } from "@vellum/core";
import type { ComponentState } from "./state.js";

export interface CountersCheck {
  state: ComponentState;
  /** The store's kind (`redis`, …). */
  kind: string;
  /** What is wrong, without secrets. */
  detail?: string;
  /** One line for the admin UI's banner while degraded. */
  summary?: string;
}

/**
 * The shared store of rate-limit and lockout counters, as a dependency: `degraded` while it cannot
 * be reached (each process counts on its own meanwhile). Undefined when the counters are this
 * process's own: then there is nothing outside the process to depend on.
 */
export function checkCounters(kernel: KernelInfo): CountersCheck | undefined {
  const status = kernel.security.counterStore();
  if (!status.shared) return undefined;
  return {
    state: status.state,
    kind: status.kind,
    ...(status.detail !== undefined && { detail: status.detail }),
    ...(status.state !== "ok" && { summary: `${status.kind} does not answer; each process counts on its own` }),
  };
}

import { createErrorType, type RegisteredComponent } from "@vellum/core";

/**
 * Component names other plugins may not register: this plugin's own components, its own routes
 * under `/health/` (they take precedence over `/health/<component>`) and `service` (the start-up
 * and shutdown entry of `/health`). `ai` is not reserved: `/health/ai` shows what an `ai`
 * component reports.
 */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([
  "db",
  "storage",
  "queue",
  "migrations",
  "counters",
  "service",
  "live",
  "ready",
  "workers",
  "dependencies",
  "ethics",
  "security",
]);

const componentReserved = createErrorType(
  "VELLUM_HEALTH_COMPONENT_RESERVED",
  (name: string, plugin: string) =>
    `plugin '${plugin}' registers the health component '${name}', a name the health plugin keeps for itself; choose another name`,
);

/** Throws for the first registered component whose name is reserved (run once every plugin is set up). */
export function refuseReservedNames(components: readonly RegisteredComponent[]): void {
  const taken = components.find((c) => RESERVED_NAMES.has(c.name));
  if (taken) throw componentReserved([taken.name, taken.plugin], { plugin: taken.plugin });
}

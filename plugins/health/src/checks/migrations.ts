import type { MigrationDrift, VellumPluginContext } from "@vellum/core";
import { type FailureLog, withDeadline } from "./state.js";

export interface MigrationsCheck {
  state: "ok" | "degraded" | "unavailable";
  applied: Array<{ plugin: string; name: string; applied_at: string }>;
  pending: Array<{ plugin: string; name: string }>;
  /** True when an applied migration is missing from the code or its checksum changed. */
  drift: boolean;
  drifted: MigrationDrift[];
}

/** Compares the migration tables with the code of every plugin (core's own queue table included). */
export async function checkMigrations(
  ctx: VellumPluginContext<object>,
  timeoutMs: number,
  log: FailureLog,
): Promise<MigrationsCheck> {
  try {
    const status = await withDeadline(ctx.kernel.migrationStatus(), timeoutMs, "migration status");
    log.passed("migrations");
    const drift = status.drift.length > 0;
    return {
      state: drift || status.pending.length > 0 ? "degraded" : "ok",
      applied: status.applied.map(({ plugin, name, applied_at }) => ({ plugin, name, applied_at })),
      pending: status.pending.map(({ plugin, name }) => ({ plugin, name })),
      drift,
      drifted: status.drift.map(({ plugin, name, kind }) => ({ plugin, name, kind })),
    };
  } catch (error) {
    log.failed("migrations", error);
    return { state: "unavailable", applied: [], pending: [], drift: false, drifted: [] };
  }
}

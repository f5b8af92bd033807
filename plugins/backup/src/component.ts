import type { ComponentReport, HealthComponent } from "@vellum/core";
import { FRESHNESS_GRACE_MS } from "./operations/drill.js";
import type { BackupOptions } from "./options.js";
import type { BackupService } from "./service.js";

/**
 * `backup` in `/health`, `/health/backup` and `/health/dependencies`, and the only claim about
 * backups in `/health/ethics`: while backups are on, every generation is encrypted (there is no
 * other kind), so the component claims `backups_encrypted: true`; while they are off or not
 * configured it makes no claim. `summary` says it in words ("Restore FAILED", "Backups disabled").
 * Degraded when the last drill failed ("Restore FAILED"), the last
 * backup failed, or the newest generation is older than the idle interval plus 15 minutes.
 */
export function backupComponent(options: Readonly<BackupOptions>, service: BackupService | undefined): HealthComponent {
  return {
    name: "backup",
    async check(): Promise<ComponentReport> {
      if (!options.target) return { state: "ok", detail: { enabled: false, summary: "Backups not configured" } };
      if (options.off || !service) return { state: "ok", detail: { enabled: false, summary: "Backups disabled" } };
      const [lastBackup, drill, target] = await Promise.all([
        service.catalog.lastBackup(),
        service.catalog.lastDrill(),
        service.targetState(),
      ]);
      const { newest, generations, bytes } = target;
      const ageSeconds = newest ? Math.max(0, Math.round((Date.now() - newest.createdMs) / 1000)) : null;
      const stale = ageSeconds !== null && ageSeconds * 1000 > options.idleMaxMs + FRESHNESS_GRACE_MS;
      const problems = [
        drill && !drill.ok ? "Restore FAILED" : undefined,
        lastBackup && !lastBackup.ok ? "backup failing" : undefined,
        stale ? "newest generation too old" : undefined,
      ].filter((p): p is string => p !== undefined);
      return {
        state: problems.length > 0 ? "degraded" : "ok",
        ethics: { backups_encrypted: true },
        detail: {
          enabled: true,
          summary: problems.length > 0 ? problems.join("; ") : "ok",
          generations,
          target_bytes: bytes,
          newest: newest
            ? { name: newest.name, created_at: new Date(newest.createdMs).toISOString(), age_seconds: ageSeconds }
            : null,
          last_backup: lastBackup ?? null,
          drill: drill ?? null,
        },
      };
    },
  };
}

import { ApiError, type PluginRouter, type RouteMeta } from "@vellum/core";
import type { BackupService } from "./service.js";

export const DRILL_PATH = "/admin/backup/drill";

/** Operator routes take the key as `Authorization: Bearer` or `X-API-Key`, without CSRF (scripts, runbooks). */
const ADMIN: RouteMeta = { auth: "key", csrf: false, apiKeyHeader: true };

/**
 * `POST /admin/backup/drill`: runs the restore drill now (after a backup in progress) and answers
 * its result, `{drill: {at, ok, generation, generationId, generationCreatedAt, durationMs,
 * failedCheck, error}}`; a failed drill is a result (200), not an error. 503 while backups are off
 * or not configured.
 */
export function registerBackupRoutes(router: PluginRouter, service: BackupService | undefined): void {
  router.post(
    DRILL_PATH,
    async () => {
      if (!service) {
        throw new ApiError("service_unavailable", "Backups are off (BACKUP_OFF) or not configured (BACKUP_TARGET).");
      }
      return { drill: await service.drillNow() };
    },
    ADMIN,
  );
}

import { ApiError, type PluginRouter, type RouteMeta, type RouteSchema, type TSchema, Type } from "@vellum/core";
import type { BackupService } from "./service.js";

export const DRILL_PATH = "/admin/backup/drill";

/** Operator routes take the key as `Authorization: Bearer` or `X-API-Key`, without CSRF (scripts, runbooks). */
const ADMIN: RouteMeta = { auth: "key", csrf: false, apiKeyHeader: true };

const Timestamp = Type.String({ format: "date-time" });
const Nullable = (schema: TSchema, description: string) => Type.Union([schema, Type.Null()], { description });

/** The drill's result (`DrillResult`), as `last-drill.json` keeps it. */
const Drill = Type.Object({
  at: Timestamp,
  ok: Type.Boolean({ description: "A failed drill is `false` with `failedCheck` and `error`, still a 200" }),
  durationMs: Type.Integer({ minimum: 0 }),
  generation: Nullable(Type.String(), "The generation restored (its file name); null when none was found"),
  generationId: Nullable(Type.String(), "The generation's id"),
  generationCreatedAt: Nullable(Timestamp, "When the generation was taken"),
  failedCheck: Nullable(
    Type.String(),
    "The check that failed: `configuration`, `generation`, `restore`, `content_root`, `row_counts` or `freshness`",
  ),
  error: Nullable(Type.String(), "Why it failed"),
});

const drillSchema: RouteSchema = {
  summary: "Runs the restore drill now and answers its result",
  description:
    "Runs after any backup in progress and restarts the drill timer. Takes the API key as " +
    "`Authorization: Bearer` or `X-API-Key`, without CSRF.",
  tags: ["backup"],
  response: {
    200: { description: "The drill's result, passed or failed", body: Type.Object({ drill: Drill }) },
    503: { description: "Backups are off (`BACKUP_OFF`) or not configured (`BACKUP_TARGET`)" },
  },
};

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
    { ...ADMIN, schema: drillSchema, action: { label: "Run the restore drill", component: "backup" } },
  );
}

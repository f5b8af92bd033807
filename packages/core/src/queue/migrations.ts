import type { MigrationSet } from "../db/migrations.js";

export const JOBS_TABLE = "_vellum_jobs";

/** The kernel's durable job table, registered under the `core` plugin's migrations. */
export const queueMigrations: MigrationSet = {
  "0001_vellum_jobs": {
    async up(db) {
      await db.schema
        .createTable("_vellum_jobs")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("queue", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("run_at", "bigint", (c) => c.notNull())
        .addColumn("last_error", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("_vellum_jobs_queue_status_id")
        .on("_vellum_jobs")
        .columns(["queue", "status", "id"])
        .execute();
      await db.schema
        .createIndex("_vellum_jobs_status_queue")
        .on("_vellum_jobs")
        .columns(["status", "queue"])
        .execute();
    },
    async down(db) {
      await db.schema.dropTable("_vellum_jobs").execute();
    },
  },
};

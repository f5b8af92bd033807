import { sql } from "kysely";
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
  /**
   * Order per key: a job's key (say, the slug it writes), and the client-visible code of its last
   * failure. The partial index holds only jobs waiting for a retry, the ones that hold back later
   * jobs of their key, so creates that never fail do not maintain it.
   */
  "0002_job_keys": {
    async up(db) {
      await db.schema.alterTable("_vellum_jobs").addColumn("key", "text").execute();
      await db.schema.alterTable("_vellum_jobs").addColumn("error_code", "text").execute();
      await db.schema
        .createIndex("_vellum_jobs_retrying")
        .on("_vellum_jobs")
        .columns(["queue", "key", "id"])
        .where(sql.ref("status"), "=", "queued")
        .where(sql.ref("attempts"), ">", 0)
        .execute();
    },
    async down(db) {
      await db.schema.dropIndex("_vellum_jobs_retrying").execute();
      await db.schema.alterTable("_vellum_jobs").dropColumn("error_code").execute();
      await db.schema.alterTable("_vellum_jobs").dropColumn("key").execute();
    },
  },
  /**
   * The queued jobs of each key, oldest first, and those without a key: how an at-least-once worker
   * finds the head of every key with one seek per key and its unkeyed jobs (`dueHeads`) without
   * reading the backlog.
   */
  "0003_queued_keys": {
    async up(db) {
      await db.schema
        .createIndex("_vellum_jobs_queued_keys")
        .on("_vellum_jobs")
        .columns(["queue", "key", "id"])
        .where(sql.ref("status"), "=", "queued")
        .execute();
      // The jobs without a key, oldest first: SQLite would otherwise walk the queue's whole backlog
      // through `(queue, status, id)` to find them.
      await db.schema
        .createIndex("_vellum_jobs_queued_unkeyed")
        .on("_vellum_jobs")
        .columns(["queue", "id"])
        .where(sql.ref("status"), "=", "queued")
        .where(sql.ref("key"), "is", null)
        .execute();
    },
    async down(db) {
      await db.schema.dropIndex("_vellum_jobs_queued_unkeyed").execute();
      await db.schema.dropIndex("_vellum_jobs_queued_keys").execute();
    },
  },
};

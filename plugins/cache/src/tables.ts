import { type KernelTables, type MigrationSet, sql, type Transaction } from "@vellum/core";

/**
 * `cache_purges`: one row, the last purge asked through `POST /api/v1/cache/purge`. The purge is
 * written so that it reaches every process on the database: its commit moves SQLite's
 * `data_version` for their connections, and each drops its local cache at its next lookup, as after
 * any other process's write. Nothing reads the row on the request path; it shows an operator the
 * last purge.
 */
export interface CachePurgesTable {
  /** Always 1. */
  id: number;
  /** Purges recorded since the table was made; counting makes every record a change of the row. */
  purges: number;
  /** The last purge's tags, as a JSON array. */
  tags: string;
  /** When the last purge was recorded (ISO), null before the first. */
  purged_at: string | null;
}

/** A type, not an interface: kysely's `withTables` wants an index signature. */
export type CacheTables = { cache_purges: CachePurgesTable };

/** The plugin's migrations, in order. Never edit one that has shipped: add the next. */
export const cacheMigrations: MigrationSet = {
  "0001_cache_purges": {
    async up(db) {
      await db.schema
        .createTable("cache_purges")
        .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn("purges", "integer", (c) => c.notNull())
        .addColumn("tags", "text", (c) => c.notNull())
        .addColumn("purged_at", "text")
        .execute();
      await db.insertInto("cache_purges").values({ id: 1, purges: 0, tags: "[]", purged_at: null }).execute();
    },
    async down(db) {
      await db.schema.dropTable("cache_purges").execute();
    },
  },
};

/** Records a purge of `tags` in the write's transaction `trx`: once it commits, every other process hears of it. */
export async function recordPurge(trx: Transaction<KernelTables>, tags: readonly string[]): Promise<void> {
  await trx
    .withTables<CacheTables>()
    .updateTable("cache_purges")
    .set((eb) => ({ purges: eb("purges", "+", 1), tags: JSON.stringify(tags), purged_at: new Date().toISOString() }))
    .where("id", "=", 1)
    .execute();
}

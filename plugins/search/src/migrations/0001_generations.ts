import type { Migration } from "@vellum/core";
import { sql } from "@vellum/core";

/**
 * The index lives in generations of tables (`search_*_g<N>`, created by the engine); this table
 * says which generation is live and which one is being built. The unique index on `state` allows
 * at most one of each.
 */
export const generationsMigration: Migration = {
  async up(db) {
    await sql`CREATE TABLE search_generations (
      generation INTEGER PRIMARY KEY AUTOINCREMENT,
      state TEXT NOT NULL CHECK (state IN ('active', 'building')),
      layout INTEGER NOT NULL,
      documents INTEGER NOT NULL DEFAULT 0,
      broken INTEGER NOT NULL DEFAULT 0,
      indexed_at TEXT,
      started_at TEXT NOT NULL,
      heartbeat_at TEXT NOT NULL
    )`.execute(db);
    await sql`CREATE UNIQUE INDEX search_generations_state ON search_generations (state)`.execute(db);
  },
  async down(db) {
    await sql`DROP TABLE IF EXISTS search_generations`.execute(db);
  },
};

import type { Migration } from "@vellum/core";
import { sql } from "@vellum/core";

/**
 * Documents written in the current transaction whose full-text entry is still to be added, by
 * generation. Rows live only inside a transaction: the flush before its commit moves them into
 * the FTS index in one statement and deletes them (see `engine/fts5/index-writes.ts`). It is a table,
 * not a temporary one, so it needs no per-connection set-up and rolls back like everything else.
 */
export const pendingFtsMigration: Migration = {
  async up(db) {
    await sql`CREATE TABLE search_pending_fts (
      generation INTEGER NOT NULL,
      docid INTEGER NOT NULL,
      PRIMARY KEY (generation, docid)
    ) WITHOUT ROWID`.execute(db);
  },
  async down(db) {
    await sql`DROP TABLE IF EXISTS search_pending_fts`.execute(db);
  },
};

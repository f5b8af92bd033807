import type { Migration } from "@vellum/core";
import { sql } from "@vellum/core";

/**
 * Articles, their tags and the slug claims of queued creates.
 *
 * - `articles_items`: one row per article; `tags` is the JSON array the API returns and
 *   `content` comes last so list pages never read its overflow pages. The id is a ULID, so its
 *   primary-key index is also the newest-first keyset index of list pages; `updated_at` is
 *   indexed for the service's `latestChange()`.
 * - `articles_tags`: one row per (tag, article); its primary key covers a tag page, which is one
 *   range scan in id order. Triggers keep it equal to `articles_items.tags`, inside SQLite, in
 *   the same statement as the write (no extra round trips on the create path).
 * - `articles_pending`: a queued create's claim on its slug. Inserting the article consumes the
 *   claim (trigger), so the claim is also the create's "not applied yet" token.
 */
export const init: Migration = {
  async up(db) {
    await db.schema
      .createTable("articles_items")
      .addColumn("id", "text", (c) => c.notNull().primaryKey())
      .addColumn("slug", "text", (c) => c.notNull())
      .addColumn("title", "text", (c) => c.notNull())
      .addColumn("tags", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("content", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("articles_items_slug").on("articles_items").column("slug").unique().execute();
    await db.schema.createIndex("articles_items_updated_at").on("articles_items").column("updated_at").execute();
    await sql`CREATE TABLE articles_tags (
      tag TEXT NOT NULL,
      article_id TEXT NOT NULL,
      PRIMARY KEY (tag, article_id)
    ) WITHOUT ROWID`.execute(db);
    await sql`CREATE TABLE articles_pending (id TEXT NOT NULL PRIMARY KEY, slug TEXT NOT NULL) WITHOUT ROWID`.execute(
      db,
    );
    await db.schema.createIndex("articles_pending_slug").on("articles_pending").column("slug").unique().execute();
    await sql`CREATE TRIGGER articles_items_inserted AFTER INSERT ON articles_items BEGIN
      INSERT INTO articles_tags (tag, article_id) SELECT value, NEW.id FROM json_each(NEW.tags);
      DELETE FROM articles_pending WHERE id = NEW.id;
    END`.execute(db);
    await sql`CREATE TRIGGER articles_items_retagged AFTER UPDATE OF tags ON articles_items BEGIN
      DELETE FROM articles_tags WHERE article_id = OLD.id AND tag IN (
        SELECT value FROM json_each(OLD.tags) WHERE value NOT IN (SELECT value FROM json_each(NEW.tags))
      );
      INSERT OR IGNORE INTO articles_tags (tag, article_id) SELECT value, NEW.id FROM json_each(NEW.tags);
    END`.execute(db);
    await sql`CREATE TRIGGER articles_items_deleted AFTER DELETE ON articles_items BEGIN
      DELETE FROM articles_tags WHERE article_id = OLD.id AND tag IN (SELECT value FROM json_each(OLD.tags));
    END`.execute(db);
  },
  async down(db) {
    await db.schema.dropTable("articles_pending").execute();
    await db.schema.dropTable("articles_tags").execute();
    await db.schema.dropTable("articles_items").execute();
  },
};

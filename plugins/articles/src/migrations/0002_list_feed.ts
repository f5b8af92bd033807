import type { Migration } from "@vellum/core";
import { sql } from "@vellum/core";

/**
 * The list-page feed: every article's summary kept as the API's JSON text, so a list page reads
 * about 250 bytes per article from one narrow, id-ordered table instead of a 2 KB row each, and
 * renders nothing (`json_object` over six columns was most of a list page's SQLite time).
 *
 * - `articles_summaries`: the one definition of a summary's JSON (the API's key order, tags as an
 *   array), a view over `articles_items`.
 * - `articles_feed`: `(id, doc)` in id order (WITHOUT ROWID: the id is the key, one b-tree), also
 *   what a tag page joins `articles_tags` to.
 * - Triggers copy the view's row in the statement that writes the article, so the feed can never
 *   lag behind or disagree with `articles_items`; existing articles are copied here.
 */
export const listFeed: Migration = {
  async up(db) {
    await sql`CREATE VIEW articles_summaries AS SELECT id, json_object(
      'id', id, 'title', title, 'slug', slug, 'tags', json(tags), 'created_at', created_at, 'updated_at', updated_at
    ) AS doc FROM articles_items`.execute(db);
    await sql`CREATE TABLE articles_feed (id TEXT NOT NULL PRIMARY KEY, doc TEXT NOT NULL) WITHOUT ROWID`.execute(db);
    await sql`INSERT INTO articles_feed (id, doc) SELECT id, doc FROM articles_summaries`.execute(db);
    await sql`CREATE TRIGGER articles_feed_inserted AFTER INSERT ON articles_items BEGIN
      INSERT INTO articles_feed (id, doc) SELECT id, doc FROM articles_summaries WHERE id = NEW.id;
    END`.execute(db);
    await sql`CREATE TRIGGER articles_feed_updated AFTER UPDATE ON articles_items BEGIN
      UPDATE articles_feed SET doc = (SELECT doc FROM articles_summaries WHERE id = NEW.id) WHERE id = NEW.id;
    END`.execute(db);
    await sql`CREATE TRIGGER articles_feed_deleted AFTER DELETE ON articles_items BEGIN
      DELETE FROM articles_feed WHERE id = OLD.id;
    END`.execute(db);
  },
  async down(db) {
    for (const trigger of ["articles_feed_inserted", "articles_feed_updated", "articles_feed_deleted"]) {
      await sql`DROP TRIGGER ${sql.raw(trigger)}`.execute(db);
    }
    await sql`DROP TABLE articles_feed`.execute(db);
    await sql`DROP VIEW articles_summaries`.execute(db);
  },
};

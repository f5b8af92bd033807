import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { sql } from "@vellum/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { articles } from "../src/index.js";
import { ARTICLES, bootArticles, create, del, put } from "./helpers.js";

/**
 * List pages answer with summaries kept by triggers in `articles_feed` (migration 0002). These
 * tests hold every list page to the articles as the service reads them, after each kind of
 * change, and run the migration over articles written before it.
 */
describe("the list-page feed", () => {
  let t: TestVellum;

  beforeEach(async () => {
    t = await bootArticles();
  });

  afterEach(async () => {
    expect(t.errors).toEqual([]);
    await t.close();
  });

  /** The list page's bytes as `JSON.stringify` of the service's records without content would give them. */
  async function expectListMatchesRecords(query: string, slugs: string[]): Promise<void> {
    const res = await t.fetch(`${ARTICLES}?${query}`);
    expect(res.status).toBe(200);
    const summaries = [];
    for (const slug of slugs) {
      const record = await t.vellum.service("articles")?.getBySlug(slug);
      if (!record) throw new Error(`no article ${slug}`);
      const { content: _content, ...summary } = record;
      summaries.push(summary);
    }
    expect(await res.text()).toBe(JSON.stringify({ articles: summaries, next_cursor: null }));
  }

  async function feedRows(): Promise<number> {
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM articles_feed`.execute(t.vellum.db());
    return Number(rows[0]?.n);
  }

  it("follows updates, renames, retags and deletes", async () => {
    for (const slug of ["a", "b", "c", "d"]) await create(t, slug, { tags: ["news", slug] });
    await expectListMatchesRecords("limit=100", ["d", "c", "b", "a"]);

    expect((await put(t, "a", { title: 'A, retitled \u2028 with "quotes"' })).status).toBe(200);
    expect((await put(t, "b", { slug: "b-renamed", tags: ["sport"] })).status).toBe(200);
    expect((await put(t, "c", { content: "<p>only the body changes</p>" })).status).toBe(200);
    expect((await del(t, "d")).status).toBe(204);

    await expectListMatchesRecords("limit=100", ["c", "b-renamed", "a"]);
    await expectListMatchesRecords("limit=100&tag=news", ["c", "a"]);
    await expectListMatchesRecords("limit=100&tag=sport", ["b-renamed"]);
    await expectListMatchesRecords("limit=100&tag=d", []);
    expect(await feedRows()).toBe(3);
  });

  it("migration 0002 fills the feed from articles written before it", async () => {
    for (const slug of ["old-1", "old-2", "old-3"]) await create(t, slug, { tags: ["archive"] });
    const before = await (await t.fetch(`${ARTICLES}?limit=100`)).text();
    // Back to the schema of migration 0001 alone, articles kept: then start again.
    const db = t.vellum.db();
    for (const trigger of ["articles_feed_inserted", "articles_feed_updated", "articles_feed_deleted"]) {
      await sql`DROP TRIGGER ${sql.raw(trigger)}`.execute(db);
    }
    await sql`DROP TABLE articles_feed`.execute(db);
    await sql`DROP VIEW articles_summaries`.execute(db);
    await sql`DELETE FROM _vellum_migrations_articles WHERE name = '0002_list_feed'`.execute(db);
    const dataDir = t.dataDir;
    await t.vellum.close();

    t = await createTestVellum({ plugins: [articles()], dataDir });
    expect(await feedRows()).toBe(3);
    expect(await (await t.fetch(`${ARTICLES}?limit=100`)).text()).toBe(before);
    await expectListMatchesRecords("limit=100&tag=archive", ["old-3", "old-2", "old-1"]);
  });
});

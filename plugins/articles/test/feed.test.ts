import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { sql } from "@vellum/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { articles } from "../src/index.js";
import { listFeed } from "../src/migrations/0002_list_feed.js";
import { ARTICLES, articleBody, bootArticles, create, del, post, put } from "./helpers.js";

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

  it("equals the summaries view after a random mix of concurrent creates, updates, renames and deletes", async () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return Math.floor(seed / 65_536) % n;
    };
    let live: string[] = [];
    let next = 0;
    const done = [0, 0, 0, 0];
    for (let round = 0; round < 6; round++) {
      // Each article is written at most once per round, so no two concurrent writes race on one slug.
      const untouched = [...live];
      const written: string[] = [];
      const writes: Promise<Response>[] = [];
      for (let i = 0; i < 10; i++) {
        const op = untouched.length === 0 ? 0 : random(4);
        done[op] = (done[op] ?? 0) + 1;
        if (op === 0) {
          const slug = `mix-${next++}`;
          written.push(slug);
          writes.push(post(t, articleBody(slug, { tags: [`t${random(3)}`] })));
          continue;
        }
        const slug = untouched.splice(random(untouched.length), 1)[0] as string;
        if (op === 1) {
          written.push(slug);
          writes.push(put(t, slug, { title: `Retitled ${round}.${i}`, tags: [`t${random(3)}`, "mix"] }));
        } else if (op === 2) {
          written.push(`${slug}-r`);
          writes.push(put(t, slug, { slug: `${slug}-r` }));
        } else {
          writes.push(del(t, slug));
        }
      }
      for (const res of await Promise.all(writes)) expect([200, 202, 204]).toContain(res.status);
      live = [...untouched, ...written];
    }
    // Reading one article applies anything still queued for it; then the feed must equal the view.
    for (const slug of live) expect((await t.fetch(`${ARTICLES}/${slug}`)).status).toBe(200);
    const db = t.vellum.db();
    const { rows } = await sql<{ items: number; feed: number; differing: number }>`SELECT
      (SELECT count(*) FROM articles_items) AS items,
      (SELECT count(*) FROM articles_feed) AS feed,
      (SELECT count(*) FROM articles_summaries s LEFT JOIN articles_feed f USING (id)
        WHERE f.doc IS NOT s.doc) AS differing`.execute(db);
    expect(rows[0]).toEqual({ items: live.length, feed: live.length, differing: 0 });
    // Creates, updates, renames and deletes all happened, several times each.
    expect(Math.min(...done)).toBeGreaterThanOrEqual(5);
  });

  it("migration 0002 fills the feed from articles written before it", async () => {
    for (const slug of ["old-1", "old-2", "old-3"]) await create(t, slug, { tags: ["archive"] });
    const before = await (await t.fetch(`${ARTICLES}?limit=100`)).text();
    // Back to the schema of migration 0001 alone, articles kept: then start again.
    const db = t.vellum.db();
    await listFeed.down?.(db);
    await sql`DELETE FROM _vellum_migrations_articles WHERE name = '0002_list_feed'`.execute(db);
    const dataDir = t.dataDir;
    await t.vellum.close();

    t = await createTestVellum({ plugins: [articles()], dataDir });
    expect(await feedRows()).toBe(3);
    expect(await (await t.fetch(`${ARTICLES}?limit=100`)).text()).toBe(before);
    await expectListMatchesRecords("limit=100&tag=archive", ["old-3", "old-2", "old-1"]);
  });
});

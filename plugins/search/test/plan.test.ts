import { sql } from "@vellum/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reindex, type SearchEngine } from "../src/index.js";
import { boot, type Harness } from "./helpers.js";

// 9,000 articles: "the" in all, "alpha" in 6,000 (over half: no bm25 weight), "beta" in 4,300
// (broad but weighted), "gamma" in 10 (selective). Inserted behind the hooks, then reindexed.
const N = 9000;
let h: Harness;
let engine: SearchEngine;

beforeAll(async () => {
  h = await boot();
  await sql`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${N - 1})
    INSERT INTO fixture_articles
    SELECT printf('P%08d', i), 'Item ' || i, 'item-' || i,
      '<p>the ' || CASE WHEN i % 3 != 0 THEN 'alpha ' ELSE '' END
        || CASE WHEN i < 4300 THEN 'beta ' ELSE '' END
        || CASE WHEN i % 900 = 0 THEN 'gamma ' ELSE '' END || 'filler</p>',
      '[]', strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i, 'unixepoch'),
      strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i, 'unixepoch')
    FROM n`.execute(h.t.vellum.db());
  await reindex(h.t.vellum);
  engine = h.t.vellum.service("search")?.engine as SearchEngine;
}, 60_000);

afterAll(async () => {
  await h.t.close();
});

const query = (q: string, limit = 20, offset = 0) => engine.query({ q, limit, offset });

describe("query planning", () => {
  it("scores every match of a selective query", async () => {
    const result = await query("gamma ");
    expect(result).toMatchObject({ plan: "ranked", total: 10 });
    expect(result.hits.every((hit) => hit.score > 0)).toBe(true);
  });

  it("leaves out words found in over half of the documents when rarer ones remain", async () => {
    const result = await query("the gamma ");
    expect(result).toMatchObject({ plan: "ranked", total: 10 });
    expect(result.hits[0]?.snippet).toMatch(/^the (beta )?<mark>gamma<\/mark> filler$/);
  });

  it("ranks a broad query among its most recent matches", async () => {
    const result = await query("beta ");
    expect(result).toMatchObject({ plan: "window", total: 4300 });
    const newest = await query("beta ", 100, 0);
    expect(newest.hits.every((hit) => Number(hit.slug.slice(5)) >= 4300 - 4000)).toBe(true);
    expect(result.hits.every((hit) => hit.score > 0)).toBe(true);
  });

  it("serves deep pages of a broad query from a window large enough", async () => {
    const page = await query("beta ", 100, 4200);
    expect(page.hits).toHaveLength(100);
    expect(page.total).toBe(4300);
  });

  it("orders queries of weightless words newest first, unscored", async () => {
    const result = await query("the ");
    expect(result).toMatchObject({ plan: "recent", total: N });
    expect(result.hits.map((hit) => hit.slug).slice(0, 3)).toEqual(["item-8999", "item-8998", "item-8997"]);
    expect(result.hits.every((hit) => hit.score === 0)).toBe(true);
    expect((await query("the alpha ")).plan).toBe("recent");
  });

  it("expands a typed prefix to its most used completions", async () => {
    const result = await query("gam");
    expect(result).toMatchObject({ plan: "ranked", total: 10 });
  });
});

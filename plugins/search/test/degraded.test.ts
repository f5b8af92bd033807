import type { HealthCheckResult } from "@vellum/core";
import { sql } from "@vellum/core";
import { afterEach, describe, expect, it } from "vitest";
import { reindex } from "../src/index.js";
import { article, boot, type Harness, slugs } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.t.close();
  h = undefined;
});

async function health(harness: Harness): Promise<HealthCheckResult | undefined> {
  const checks: HealthCheckResult[] = [];
  await harness.t.vellum.hooks.callHookParallel("health:check", { checks });
  return checks.find((c) => c.name === "search");
}

async function activeGeneration(harness: Harness): Promise<number> {
  const rows = await sql<{ generation: number }>`
    SELECT generation FROM search_generations WHERE state = 'active'`.execute(harness.t.vellum.db());
  return rows.rows[0]?.generation as number;
}

describe("index health", () => {
  it("reports documents, last index time and freshness", async () => {
    h = await boot();
    await h.articles.create(article("one", "One", "<p>First.</p>"));
    const result = await health(h);
    expect(result).toEqual({
      name: "search",
      ok: true,
      state: "ok",
      detail: { documents: 1, indexed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), stale: false },
    });
  });

  it("is degraded (stale) when articles changed behind its back, and a reindex catches up", async () => {
    h = await boot();
    await h.articles.create(article("one", "One", "<p>First.</p>"));
    await sql`INSERT INTO fixture_articles VALUES ('Z1', 'Hidden', 'hidden', '<p>Written around the hooks.</p>', '[]',
      '2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z')`.execute(h.t.vellum.db());
    expect(await health(h)).toMatchObject({ ok: false, state: "degraded", detail: { documents: 1, stale: true } });
    expect((await h.search("hidden ")).degraded).toBeUndefined();
    await reindex(h.t.vellum);
    expect(await health(h)).toMatchObject({ ok: true, state: "ok", detail: { documents: 2, stale: false } });
    expect(slugs(await h.search("hidden "))).toEqual(["hidden"]);
  });
});

describe("degraded mode", () => {
  it("answers 200 with no results when the index is missing, keeps articles readable and writable", async () => {
    h = await boot();
    await h.articles.create(article("kept", "Kept", "<p>A lighthouse story.</p>"));
    const generation = await activeGeneration(h);
    await sql`DROP TABLE ${sql.table(`search_fts_g${generation}`)}`.execute(h.t.vellum.db());

    const res = await h.t.fetch("/api/v1/search?q=lighthouse&limit=5&offset=0");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ results: [], total: 0, limit: 5, offset: 0, degraded: true });
    expect(await health(h)).toMatchObject({ name: "search", ok: false, state: "unavailable", detail: { stale: true } });
    expect((await h.t.fetch("/api/v1/articles/kept")).status).toBe(200);

    // The failed query marked the generation broken; publishing goes on without it.
    await h.articles.create(article("later", "Later", "<p>Another lighthouse.</p>"));
    expect((await h.t.fetch("/api/v1/articles/later")).status).toBe(200);
    expect(h.t.errors).toEqual([]);

    await reindex(h.t.vellum);
    expect(slugs(await h.search("lighthouse ")).sort()).toEqual(["kept", "later"]);
    expect(await health(h)).toMatchObject({ ok: true, state: "ok" });
  });

  it("answers degraded when a query hits a damaged index, and marks it for rebuilding", async () => {
    h = await boot();
    await h.articles.create(article("kept", "Kept", "<p>A lighthouse story.</p>"));
    const generation = await activeGeneration(h);
    await sql`ALTER TABLE ${sql.table(`search_terms_g${generation}`)} RENAME COLUMN docs TO d`.execute(h.t.vellum.db());
    expect(await h.search("lighthouse ")).toMatchObject({ results: [], total: 0, degraded: true });
    const rows = await sql<{ broken: number }>`
      SELECT broken FROM search_generations WHERE generation = ${generation}`.execute(h.t.vellum.db());
    expect(rows.rows[0]?.broken).toBe(1);
    expect(await health(h)).toMatchObject({ state: "unavailable" });
    expect(h.t.errors).toEqual([]);
    await reindex(h.t.vellum);
    expect(slugs(await h.search("lighthouse "))).toEqual(["kept"]);
  });

  it("builds the index by itself when search is added to a site that already has articles", async () => {
    const first = await boot();
    await first.articles.create(article("before", "Before search", "<p>An old harbour.</p>"));
    const dataDir = first.t.dataDir;
    await first.t.vellum.close();
    h = await boot({ dataDir, search: { autoRepair: true, repairIntervalMs: 50 } });
    const deadline = Date.now() + 5000;
    let body = await h.search("harbour ");
    while (body.degraded && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      body = await h.search("harbour ");
    }
    expect(slugs(body)).toEqual(["before"]);
    expect(await health(h)).toMatchObject({ state: "ok", detail: { documents: 1 } });
  });
});

describe("index writes share the article's transaction", () => {
  it("keeps publishing when writing to the index fails, and marks the index broken", async () => {
    h = await boot();
    await h.articles.create(article("kept", "Kept", "<p>A lighthouse story.</p>"));
    const generation = await activeGeneration(h);
    await sql`DROP TABLE ${sql.table(`search_docs_g${generation}`)}`.execute(h.t.vellum.db());
    await h.articles.create(article("later", "Later", "<p>Another lighthouse.</p>"));
    expect((await h.t.fetch("/api/v1/articles/later")).status).toBe(200);
    expect(h.t.errors.map((e) => (e.error as { code?: string }).code)).toEqual(["VELLUM_SEARCH_INDEX_WRITE_FAILED"]);
    h.t.errors.length = 0;
    expect((await h.search("lighthouse ")).degraded).toBe(true);
    expect(await health(h)).toMatchObject({ state: "unavailable" });
    await reindex(h.t.vellum);
    expect(slugs(await h.search("lighthouse ")).sort()).toEqual(["kept", "later"]);
  });

  it("leaves no trace of a write that rolls back", async () => {
    h = await boot();
    const db = h.t.vellum.db();
    const now = new Date().toISOString();
    const ghost = {
      id: "G1",
      slug: "ghost",
      title: "Ghost",
      content: "<p>Phantom words.</p>",
      tags: [],
      created_at: now,
      updated_at: now,
    };
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`INSERT INTO fixture_articles VALUES ('G1', 'Ghost', 'ghost', '', '[]', ${now}, ${now})`.execute(trx);
        await h?.t.vellum.hooks.callHook("article:commit", { op: "create", article: ghost, trx, context: {} });
        throw new Error("the write failed after indexing");
      }),
    ).rejects.toThrow("the write failed");
    expect((await h.search("phantom ")).total).toBe(0);
    expect(await health(h)).toMatchObject({ state: "ok", detail: { documents: 0, stale: false } });
  });
});

import { rm } from "node:fs/promises";
import { type ComponentReport, sql } from "@vellum/core";
import { createTestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { reindex } from "../src/index.js";
import { fixtureArticles } from "./fixtures/articles-fixture.js";
import { article, boot, type Harness, slugs } from "./helpers.js";

let h: Harness | undefined;
/** Data dirs of instances restarted on them (`close()` keeps a dir it was given). */
const dataDirs: string[] = [];
afterEach(async () => {
  await h?.t.close();
  h = undefined;
  for (const dir of dataDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** The index's health component, checked as the health plugin checks it. */
function health(harness: Harness): Promise<ComponentReport> {
  return Promise.resolve(harness.component("search").check());
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function activeGeneration(harness: Harness): Promise<number> {
  const rows = await sql<{ generation: number }>`
    SELECT generation FROM search_generations WHERE state = 'active'`.execute(harness.t.vellum.db());
  return rows.rows[0]?.generation as number;
}

describe("index health", () => {
  it("is a readiness component reporting documents, last index time and freshness", async () => {
    h = await boot();
    await h.articles.create(article("one", "One", "<p>First.</p>"));
    expect(h.component("search")).toMatchObject({ name: "search", plugin: "search", readiness: true });
    expect(await health(h)).toStrictEqual({
      state: "ok",
      detail: { documents: 1, indexed_at: expect.stringMatching(ISO_TIME), stale: false },
      ethics: { search_queries_logged: false },
    });
  });

  it("reports no index time (null) while there is no index", async () => {
    // Articles written before search was installed; without autoRepair nothing builds the index.
    const before = fixtureArticles();
    const first = await createTestVellum({ plugins: [before.plugin] });
    await before.create(article("before", "Before search", "<p>An old harbour.</p>"));
    await first.vellum.close();
    dataDirs.push(first.dataDir);
    h = await boot({ dataDir: first.dataDir });
    expect(await health(h)).toStrictEqual({
      state: "unavailable",
      detail: { documents: 0, indexed_at: null, stale: true },
      ethics: { search_queries_logged: false },
    });
    expect((await h.search("harbour ")).degraded).toBe(true);
  });

  it("is degraded (stale) when articles changed behind its back, and a reindex catches up", async () => {
    h = await boot();
    await h.articles.create(article("one", "One", "<p>First.</p>"));
    await sql`INSERT INTO fixture_articles VALUES ('Z1', 'Hidden', 'hidden', '<p>Written around the hooks.</p>', '[]',
      '2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z')`.execute(h.t.vellum.db());
    expect(await health(h)).toMatchObject({ state: "degraded", detail: { documents: 1, stale: true } });
    expect((await h.search("hidden ")).degraded).toBeUndefined();
    await reindex(h.t.vellum);
    expect(await health(h)).toMatchObject({ state: "ok", detail: { documents: 2, stale: false } });
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
    expect(await health(h)).toMatchObject({ state: "unavailable", detail: { stale: true } });
    expect((await h.t.fetch("/api/v1/articles/kept")).status).toBe(200);

    // The failed query marked the generation broken; publishing goes on without it.
    await h.articles.create(article("later", "Later", "<p>Another lighthouse.</p>"));
    expect((await h.t.fetch("/api/v1/articles/later")).status).toBe(200);
    expect(h.t.errors).toEqual([]);

    await reindex(h.t.vellum);
    expect(slugs(await h.search("lighthouse ")).sort()).toEqual(["kept", "later"]);
    expect(await health(h)).toMatchObject({ state: "ok" });
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
    dataDirs.push(dataDir);
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

  it("keeps publishing when the index subscriber throws: the kernel rolls its part back and reports it", async () => {
    h = await boot();
    const announced: string[] = [];
    h.t.vellum.hooks.hook("search:indexed", ({ id }) => {
      announced.push(id);
    });
    const kept = await h.articles.create(article("kept", "Kept", "<p>A lighthouse story.</p>"));
    const db = h.t.vellum.db();
    // With its generations table out of reach, search cannot even find the index to write to.
    await sql`ALTER TABLE search_generations RENAME TO search_generations_away`.execute(db);
    const later = await h.articles.create(article("later", "Later", "<p>Another lighthouse.</p>"));
    await sql`ALTER TABLE search_generations_away RENAME TO search_generations`.execute(db);

    expect((await h.t.fetch("/api/v1/articles/later")).status).toBe(200);
    expect(h.t.errors.map((e) => ({ plugin: e.plugin, hook: e.hook }))).toEqual([
      { plugin: "search", hook: "article:commit" },
    ]);
    h.t.errors.length = 0;
    expect(announced).toEqual([kept.id]);
    expect(later.id).not.toBe(kept.id);

    // Nothing of the failed index write is left; the index is stale, not broken.
    const pending = await sql<{ n: number }>`SELECT count(*) AS n FROM search_pending_fts`.execute(db);
    expect(pending.rows[0]?.n).toBe(0);
    expect(await health(h)).toMatchObject({ state: "degraded", detail: { documents: 1, stale: true } });
    const stale = await h.search("lighthouse ");
    expect(stale.degraded).toBeUndefined();
    expect(slugs(stale)).toEqual(["kept"]);

    await reindex(h.t.vellum);
    expect(slugs(await h.search("lighthouse ")).sort()).toEqual(["kept", "later"]);
    expect(await health(h)).toMatchObject({ state: "ok", detail: { documents: 2, stale: false } });
    expect(h.t.errors).toEqual([]);
  });

  it("repairs a stale index by itself", async () => {
    h = await boot({ search: { autoRepair: true, repairIntervalMs: 50 } });
    await h.articles.create(article("one", "One", "<p>First.</p>"));
    await sql`INSERT INTO fixture_articles VALUES ('Z1', 'Hidden', 'hidden', '<p>Written around the hooks.</p>', '[]',
      '2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z')`.execute(h.t.vellum.db());
    const deadline = Date.now() + 5000;
    while ((await health(h)).state !== "ok" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(await health(h)).toMatchObject({ state: "ok", detail: { documents: 2, stale: false } });
    expect(slugs(await h.search("hidden "))).toEqual(["hidden"]);
  });

  it("leaves no trace of a write that rolls back", async () => {
    h = await boot();
    const announced: string[] = [];
    h.t.vellum.hooks.hook("search:indexed", ({ id }) => {
      announced.push(id);
    });
    const generation = await activeGeneration(h);
    let inTransaction: string[] = [];
    await expect(
      h.articles.createThenFail(
        article("ghost", "Ghost", "<p>Phantom words.</p>"),
        new Error("the write failed after indexing"),
        async (trx) => {
          const rows = await sql<{ slug: string }>`
            SELECT slug FROM ${sql.table(`search_docs_g${generation}`)}`.execute(trx);
          inTransaction = rows.rows.map((r) => r.slug);
        },
      ),
    ).rejects.toThrow("the write failed after indexing");
    // The index entry was written in the transaction, and went with it.
    expect(inTransaction).toEqual(["ghost"]);
    const db = h.t.vellum.db();
    const left = await sql<{ docs: number; pending: number }>`
      SELECT (SELECT count(*) FROM ${sql.table(`search_docs_g${generation}`)}) AS docs,
             (SELECT count(*) FROM search_pending_fts) AS pending`.execute(db);
    expect(left.rows[0]).toEqual({ docs: 0, pending: 0 });
    expect((await h.search("phantom ")).total).toBe(0);
    expect(await health(h)).toMatchObject({ state: "ok", detail: { documents: 0, stale: false } });
    expect(announced).toEqual([]);
    expect(h.t.errors).toEqual([]);
  });
});

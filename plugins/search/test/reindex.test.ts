import { join } from "node:path";
import { setImmediate as tick } from "node:timers/promises";
import Database from "better-sqlite3";
import { sql } from "@vellum/core";
import { createTestVellum, TEST_API_KEY } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { reindex, search } from "../src/index.js";
import { article, boot, type Harness, insertFreshBuild } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.t.close();
  h = undefined;
});

const token = (n: number) => `zq${n}marker`;
const body = (n: number) => `<p>Article number ${n} carries ${token(n)} and common words about harbours.</p>`;

async function searchTables(harness: Harness): Promise<string[]> {
  const rows = await sql<{ name: string }>`
    SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'search_*_g[0-9]*' ORDER BY name`.execute(
    harness.t.vellum.db(),
  );
  return rows.rows.map((r) => r.name);
}

describe("reindex", () => {
  it("rebuilds while search answers and writes flow, losing nothing", async () => {
    h = await boot({ search: { reindexBatchSize: 50 } });
    const harness = h;
    const count = 1200;
    await harness.articles.bulk(Array.from({ length: count }, (_, n) => article(`a-${n}`, `Article ${n}`, body(n))));
    const service = harness.t.vellum.service("search");
    if (!service) throw new Error("search service missing");

    const progress: number[] = [];
    const running = reindex(harness.t.vellum, { onProgress: (p) => progress.push(p.done) });
    const deleted: number[] = [];
    const updated: number[] = [];
    const created: number[] = [];
    let writesDuringBuild = 0;
    let searchesDuringBuild = 0;
    let next = count;
    for (let i = 0; service.reindexStatus().state === "running"; i++) {
      const n = next++;
      await harness.articles.create(article(`a-${n}`, `Article ${n}`, body(n)));
      created.push(n);
      const victim = (i * 37) % count;
      if (!deleted.includes(victim) && !updated.includes(victim)) {
        if (i % 2 === 0) {
          await harness.articles.remove(`a-${victim}`);
          deleted.push(victim);
        } else {
          await harness.articles.update(`a-${victim}`, { content: `<p>Rewritten: ${token(victim + 100_000)}.</p>` });
          updated.push(victim);
        }
      }
      const found = await harness.search("harbours ", { limit: "5" });
      expect(found.degraded).toBeUndefined();
      expect(found.results.length).toBe(5);
      if (service.reindexStatus().state === "running") {
        writesDuringBuild++;
        searchesDuringBuild++;
      }
      await tick();
    }
    const summary = await running;
    expect(writesDuringBuild).toBeGreaterThan(5);
    expect(searchesDuringBuild).toBeGreaterThan(5);
    expect(progress.at(-1)).toBeGreaterThanOrEqual(count - deleted.length);
    expect(summary).toMatchObject({ generation: 2, previousGeneration: 1 });

    const live = Array.from({ length: next }, (_, n) => n).filter((n) => !deleted.includes(n));
    for (const n of live) {
      const expected = updated.includes(n) ? token(n + 100_000) : token(n);
      const { results } = await harness.search(`${expected} `);
      expect(
        results.map((r) => r.slug),
        `${expected}`,
      ).toEqual([`a-${n}`]);
    }
    for (const n of [...deleted, ...updated]) expect((await harness.search(`${token(n)} `)).total, token(n)).toBe(0);
    expect((await harness.search("harbours ")).total).toBe(live.length - updated.length);
    expect((await service.stats()).documents).toBe(live.length);
    const tables = await searchTables(harness);
    expect(tables.filter((name) => /_g\d+$/.test(name))).toEqual(
      ["docs", "fts", "tags", "terms", "tombstones", "variants"].map((p) => `search_${p}_g2`).sort(),
    );
    expect(tables.filter((name) => name.includes("_g1"))).toEqual([]);
  });

  it("is started by POST /admin/reindex with the key in X-API-Key, and reports progress", async () => {
    h = await boot();
    await h.articles.create(article("one", "One", "<p>First harbour.</p>"));
    expect((await h.t.fetch("/admin/reindex", { method: "POST" })).status).toBe(401);
    const started = await h.t.fetch("/admin/reindex", { method: "POST", headers: { "x-api-key": TEST_API_KEY } });
    expect(started.status).toBe(202);
    expect(await started.json()).toMatchObject({ status: "started", state: "running" });
    const again = await h.t.fetch("/admin/reindex", {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    expect(await again.json()).toMatchObject({ status: "running" });
    const deadline = Date.now() + 5000;
    let status = await (await h.t.fetch("/admin/reindex", { headers: { "x-api-key": TEST_API_KEY } })).json();
    while (status.state === "running" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      status = await (await h.t.fetch("/admin/reindex", { headers: { "x-api-key": TEST_API_KEY } })).json();
    }
    expect(status).toMatchObject({
      state: "idle",
      last: { ok: true, documents: 1, generation: 2 },
      index: { state: "ok", generation: 2, documents: 1 },
      building: null,
    });
    expect((await h.t.fetch("/admin/reindex")).status).toBe(401);
  });

  it("clears what a crashed rebuild left behind, and refuses to run beside a live one", async () => {
    h = await boot();
    await h.articles.create(article("one", "One", "<p>First harbour.</p>"));
    const db = h.t.vellum.db();
    const old = new Date(Date.now() - 10 * 60_000).toISOString();
    await sql`INSERT INTO search_generations (generation, state, layout, started_at, heartbeat_at)
      VALUES (7, 'building', 1, ${old}, ${old})`.execute(db);
    await sql`CREATE TABLE search_docs_g7 (x)`.execute(db);
    await sql`CREATE TABLE search_terms_g9 (x)`.execute(db);
    await reindex(h.t.vellum);
    expect((await searchTables(h)).filter((n) => /_g[79]$/.test(n))).toEqual([]);

    const now = new Date().toISOString();
    await sql`INSERT INTO search_generations (state, layout, started_at, heartbeat_at)
      VALUES ('building', 1, ${now}, ${now})`.execute(db);
    await expect(reindex(h.t.vellum)).rejects.toMatchObject({ code: "VELLUM_SEARCH_REINDEX_RUNNING" });
    const res = await h.t.fetch("/admin/reindex", { method: "POST", headers: { "x-api-key": TEST_API_KEY } });
    expect(await res.json()).toMatchObject({ status: "running" });
  });

  it("answers running, and reports nothing, when another process starts a build between its look and its start", async () => {
    let afterQuery: ((sql: string) => void) | undefined;
    h = await boot({ onQuery: ({ sql }) => afterQuery?.(sql) });
    await h.articles.create(article("one", "One", "<p>First harbour.</p>"));
    const other = new Database(join(h.t.dataDir, "db", "vellum.sqlite"));
    other.pragma("busy_timeout = 0");
    let generation: number | undefined;
    // The handler's look ends with the live index's latest change, read outside any write
    // transaction; right then the other process starts its build.
    afterQuery = (sql) => {
      if (generation === undefined && /^select max\("updated_at"\)/i.test(sql)) generation = insertFreshBuild(other);
    };
    try {
      const res = await h.t.fetch("/admin/reindex", { method: "POST", headers: { "x-api-key": TEST_API_KEY } });
      expect(generation).toBeDefined();
      expect(res.status).toBe(202);
      expect(await res.json()).toMatchObject({ status: "running", generation, state: "idle", last: null });
      await tick();
      expect(h.t.errors).toEqual([]);
    } finally {
      afterQuery = undefined;
      other.close();
    }
  });

  it("explains what is missing", async () => {
    const bare = await createTestVellum();
    try {
      await expect(reindex(bare.vellum)).rejects.toMatchObject({ code: "VELLUM_SEARCH_NOT_INSTALLED" });
    } finally {
      await bare.close();
    }
    const alone = await createTestVellum({ plugins: [search({ autoRepair: false })] });
    try {
      await expect(reindex(alone.vellum)).rejects.toMatchObject({ code: "VELLUM_SEARCH_NO_SOURCE" });
      const res = await alone.fetch("/admin/reindex", { method: "POST", headers: { "x-api-key": TEST_API_KEY } });
      expect(res.status).toBe(503);
      expect((await alone.fetch("/api/v1/search?q=anything")).status).toBe(200);
    } finally {
      await alone.close();
    }
  });
});

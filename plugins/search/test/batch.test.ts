import { definePlugin, sql } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { search } from "../src/index.js";
import { generationTables } from "../src/engine/fts5/schema.js";
import type { SearchDocument } from "../src/engine/types.js";
import { fixtureArticles } from "./fixtures/articles-fixture.js";

/**
 * Full-text entries are added once per transaction, just before it commits. These tests run
 * index and remove calls in a queue worker's batch (many jobs in one write, a savepoint each),
 * and hold the FTS index to its content table with FTS5's own integrity check.
 */
type Step = { op: "index"; doc: SearchDocument } | { op: "remove"; id: string } | { op: "fail"; doc: SearchDocument };

function doc(id: string, words: string, tags = ["batch"]): SearchDocument {
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  return {
    id,
    slug: id.toLowerCase(),
    title: `Title ${id}`,
    tags,
    body: words,
    created_at: at,
    updated_at: at,
  };
}

/** The name of the batcher's queue (a plugin's own queue), once it is set up. */
let QUEUE = "";
/** The transactions the batcher's jobs ran in. */
const transactions = new Set<unknown>();

/** Applies each job's step through the search engine, in the write of the worker's batch. */
const batcher = definePlugin({
  name: "batcher",
  dependsOn: ["search"],
  setup(ctx) {
    const queue = ctx.queue();
    QUEUE = queue.name;
    queue.process(
      async (job, w) => {
        const engine = ctx.inject("search").engine;
        const step = job.payload as Step;
        transactions.add(w.trx);
        if (step.op === "remove") return void (await engine.remove(w.trx, step.id));
        await engine.index(w.trx, step.doc);
        if (step.op === "fail") throw new Error("this job fails after indexing its document");
      },
      { batchSize: 100, maxAttempts: 1 },
    );
  },
});

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Enqueues `steps` in one transaction and waits until the worker applied them, in one write. */
async function runInOneBatch(vellum: TestVellum, steps: Step[]): Promise<void> {
  const queue = vellum.vellum.queue();
  transactions.clear();
  await vellum.vellum
    .db()
    .transaction()
    .execute(async (trx) => {
      for (const step of steps) await queue.enqueue(trx, QUEUE, step.op, step);
    });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const stats = (await queue.stats()).find((s) => s.queue === QUEUE);
    if (!stats || stats.queued === 0) break;
    if (Date.now() > deadline) throw new Error("the batch was not applied in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(transactions.size).toBe(1);
}

async function ftsState(vellum: TestVellum) {
  const db = vellum.vellum.db();
  const { rows } = await sql<{ generation: number }>`
    SELECT generation FROM search_generations WHERE state = 'active'`.execute(db);
  const tables = generationTables(rows[0]?.generation as number);
  const fts = sql.table(tables.fts);
  // Raises SQLITE_CORRUPT_VTAB when the index and its content table disagree.
  await sql`INSERT INTO ${fts} (${fts}, rank) VALUES ('integrity-check', 1)`.execute(db);
  const match = async (word: string) =>
    (
      await sql<{ id: string }>`SELECT d.article_id AS id FROM ${fts} f
        JOIN ${sql.table(tables.docs)} d ON d.rowid = f.rowid
        WHERE ${fts} MATCH ${word} ORDER BY d.article_id`.execute(db)
    ).rows.map((r) => r.id);
  const pending = await sql<{ n: number }>`SELECT count(*) AS n FROM search_pending_fts`.execute(db);
  const counts = async (table: string, column: string) =>
    Object.fromEntries(
      (
        await sql<{
          key: string;
          docs: number;
        }>`SELECT ${sql.id(column)} AS key, docs FROM ${sql.table(table)}`.execute(db)
      ).rows.map((row) => [row.key, row.docs]),
    );
  const variantsOf = async (word: string) =>
    (await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(tables.variants)} WHERE term = ${word}`.execute(db))
      .rows[0]?.n;
  return {
    match,
    pending: Number(pending.rows[0]?.n),
    terms: () => counts(tables.terms, "term"),
    tags: () => counts(tables.tags, "tag"),
    variantsOf,
  };
}

describe("full-text entries added once per transaction", () => {
  it("indexes a batch with creates, updates, deletes and a failing job in it, and stays consistent", async () => {
    const articles = fixtureArticles();
    t = await createTestVellum({
      plugins: [articles.plugin, search({ rateLimit: false, autoRepair: false }), batcher()],
    });
    await t.vellum.service("search")?.engine.ensureIndex();
    await runInOneBatch(t, [{ op: "index", doc: doc("KEEP", "alpha lasting") }]);

    await runInOneBatch(t, [
      { op: "index", doc: doc("A", "alpha original") },
      { op: "index", doc: doc("A", "alpha replaced") },
      { op: "index", doc: doc("B", "bravo transient") },
      { op: "remove", id: "B" },
      { op: "fail", doc: doc("F", "foxtrot rolledback") },
      { op: "index", doc: doc("C", "charlie plain", ["batch", "gamma"]) },
      { op: "index", doc: doc("KEEP", "alpha lasting updated") },
      { op: "remove", id: "NEVER" },
    ]);

    const state = await ftsState(t);
    expect(state.pending).toBe(0);
    expect(await state.match("alpha")).toEqual(["A", "KEEP"]);
    expect(await state.match("original")).toEqual([]);
    expect(await state.match("replaced")).toEqual(["A"]);
    expect(await state.match("transient")).toEqual([]);
    expect(await state.match("rolledback")).toEqual([]);
    expect(await state.match("charlie")).toEqual(["C"]);
    expect(await state.match("updated")).toEqual(["KEEP"]);
    // The vocabulary counts what the index holds: words and tags of replaced, removed and rolled-back documents are gone.
    const terms = await state.terms();
    expect(terms).toMatchObject({ alpha: 2, charlie: 1, replaced: 1, updated: 1 });
    for (const word of ["original", "transient", "bravo", "foxtrot", "rolledback"])
      expect(terms).not.toHaveProperty(word);
    expect(await state.tags()).toEqual({ batch: 3, gamma: 1 });
    expect(await state.variantsOf("charlie")).toBeGreaterThan(0);
    const stats = (await t.vellum.queue().stats()).find((s) => s.queue === QUEUE);
    expect(stats?.failed).toBe(1);

    // The next batch updates and deletes what the last one indexed.
    await runInOneBatch(t, [
      { op: "index", doc: doc("A", "alpha third") },
      { op: "remove", id: "C" },
    ]);
    const after = await ftsState(t);
    expect(await after.match("replaced")).toEqual([]);
    expect(await after.match("third")).toEqual(["A"]);
    expect(await after.match("charlie")).toEqual([]);
    expect(after.pending).toBe(0);
    const termsAfter = await after.terms();
    expect(termsAfter).toMatchObject({ alpha: 2, third: 1 });
    for (const word of ["charlie", "plain", "replaced"]) expect(termsAfter).not.toHaveProperty(word);
    expect(await after.variantsOf("charlie")).toBe(0);
    expect(await after.tags()).toEqual({ batch: 2 });
  });

  /**
   * Search on a test Vellum with article A indexed, and the live generation's document insert made
   * to fail for article BOOM (a damaged index, as the engine sees it).
   */
  async function failingForBoom(): Promise<{ vellum: TestVellum; generation: number }> {
    const articles = fixtureArticles();
    const vellum = await createTestVellum({
      plugins: [articles.plugin, search({ rateLimit: false, autoRepair: false }), batcher()],
    });
    t = vellum;
    await vellum.vellum.service("search")?.engine.ensureIndex();
    await runInOneBatch(vellum, [{ op: "index", doc: doc("A", "alpha first") }]);
    const db = vellum.vellum.db();
    const { rows } = await sql<{ generation: number }>`
      SELECT generation FROM search_generations WHERE state = 'active'`.execute(db);
    const generation = rows[0]?.generation as number;
    await sql`CREATE TRIGGER fail_boom BEFORE INSERT ON ${sql.table(generationTables(generation).docs)}
      WHEN NEW.article_id = 'BOOM' BEGIN SELECT RAISE(ABORT, 'injected index failure'); END`.execute(db);
    return { vellum, generation };
  }

  async function generationState(vellum: TestVellum, generation: number) {
    const db = vellum.vellum.db();
    const broken = await sql<{ broken: number }>`
      SELECT broken FROM search_generations WHERE generation = ${generation}`.execute(db);
    const docs = await sql<{ id: string }>`
      SELECT article_id AS id FROM ${sql.table(generationTables(generation).docs)} ORDER BY article_id`.execute(db);
    return { broken: broken.rows[0]?.broken, docs: docs.rows.map((row) => row.id) };
  }

  it("writes no later job of the batch to a generation an earlier job's write broke", async () => {
    const { vellum, generation } = await failingForBoom();

    await runInOneBatch(vellum, [
      { op: "index", doc: doc("BOOM", "bravo breaks it") },
      { op: "index", doc: doc("C", "charlie after") },
    ]);
    expect(await generationState(vellum, generation)).toEqual({ broken: 1, docs: ["A"] });
  });

  it("writes later jobs to a generation whose breaking was rolled back with the job that broke it", async () => {
    const { vellum, generation } = await failingForBoom();

    // The job marks the generation broken, then throws: its savepoint takes the mark back.
    await runInOneBatch(vellum, [
      { op: "fail", doc: doc("BOOM", "bravo breaks it") },
      { op: "index", doc: doc("C", "charlie after") },
    ]);
    expect(await generationState(vellum, generation)).toEqual({ broken: 0, docs: ["A", "C"] });
    const state = await ftsState(vellum);
    expect(await state.match("charlie")).toEqual(["C"]);
    expect(state.pending).toBe(0);
  });
});

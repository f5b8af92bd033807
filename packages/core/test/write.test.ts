import { afterEach, describe, expect, it } from "vitest";
import type { AnyDb, AnyTransaction } from "../src/db/types.js";
import { collectForCommit, definePlugin, type HookOptions, type HookPayload } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { type NotesTables, notesPlugin } from "./fixtures/notes-plugin.js";
import { hookFailures, noteCount, postNote } from "./helpers/notes.js";

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

type CommitPayload = HookPayload<"article:commit">;

/** A plugin with a table `<name>_rows (id)` whose `article:commit` subscriber is `fn`. */
function committer(name: string, fn: (payload: CommitPayload) => void | Promise<void>, options?: HookOptions) {
  return definePlugin({
    name,
    setup(ctx) {
      ctx.migrations({
        "0001_init": {
          up: (db) =>
            db.schema
              .createTable(`${name}_rows`)
              .addColumn("id", "text", (c) => c.primaryKey())
              .execute(),
        },
      });
      ctx.hooks.hook("article:commit", fn, options);
    },
  })();
}

async function insertRow(trx: AnyTransaction, table: string, id: string): Promise<void> {
  await trx.insertInto(table).values({ id }).execute();
}

async function rowIds(table: string): Promise<string[]> {
  const rows = await t!.vellum.db().selectFrom(table).select("id").orderBy("id").execute();
  return rows.map((row) => row.id as string);
}

/** Records each `article:afterCreate`, with whether the note was committed by then. */
function afterCreateProbe(seen: Array<{ id: string; stored: boolean }>) {
  return definePlugin<object, NotesTables>({
    name: "probe",
    setup(ctx) {
      ctx.hooks.hook("article:afterCreate", async ({ article }) => {
        const row = await ctx.db.selectFrom("notes_items").select("id").where("id", "=", article.id).executeTakeFirst();
        seen.push({ id: article.id, stored: row !== undefined });
      });
    },
  })();
}

describe("commit hooks of a write (ctx.write)", () => {
  it("run another plugin's subscriber in the write's transaction, committed with it, then the after hooks", async () => {
    const seen: Array<{ id: string; stored: boolean }> = [];
    const indexer = committer("indexer", ({ article, trx }) => insertRow(trx, "indexer_rows", article.id));
    t = await createTestVellum({ plugins: [notesPlugin(), indexer, afterCreateProbe(seen)] });
    expect((await postNote(t, "n1")).status).toBe(201);
    expect(await rowIds("indexer_rows")).toEqual(["n1"]);
    expect(seen).toEqual([{ id: "n1", stored: true }]);
  });

  it("roll back another plugin's failing subscriber to its savepoint and report it; the write commits", async () => {
    const collected: string[][] = [];
    const veto = committer("veto", async ({ article, trx }) => {
      await insertRow(trx, "veto_rows", article.id);
      await collectForCommit(trx, "veto:log", article.id, async (_trx, ids: string[]) => void collected.push(ids));
      if (article.id === "bad") throw new Error("index full");
    });
    const indexer = committer("indexer", ({ article, trx }) => insertRow(trx, "indexer_rows", article.id));
    const seen: Array<{ id: string; stored: boolean }> = [];
    t = await createTestVellum({ plugins: [notesPlugin(), veto, indexer, afterCreateProbe(seen)] });

    expect((await postNote(t, "good")).status).toBe(201);
    expect((await postNote(t, "bad")).status).toBe(201);
    expect(await noteCount(t)).toBe(2);
    expect((await t.fetch("/api/v1/notes/bad")).status).toBe(200);
    // The failing subscriber's own row and collected item went with its savepoint; the subscriber
    // after it ran, and the write's after hooks too.
    expect(await rowIds("veto_rows")).toEqual(["good"]);
    expect(collected).toEqual([["good"]]);
    expect(await rowIds("indexer_rows")).toEqual(["bad", "good"]);
    expect(seen.map((s) => s.id)).toEqual(["good", "bad"]);

    expect(t.errors).toEqual([
      expect.objectContaining({ plugin: "veto", hook: "article:commit", error: new Error("index full") }),
    ]);
    expect(await hookFailures(t, "veto", "article:commit")).toBe(1);
  });

  it("fail the write when a subscriber of the writing plugin itself throws, with every subscriber's work", async () => {
    const indexer = committer("indexer", ({ article, trx }) => insertRow(trx, "indexer_rows", article.id));
    const seen: Array<{ id: string; stored: boolean }> = [];
    // The indexer subscribes first, so its work is done (and its savepoint released) when notes refuses.
    t = await createTestVellum({ plugins: [indexer, notesPlugin({ refuse: "forbidden" }), afterCreateProbe(seen)] });

    expect((await postNote(t, "fine", "all good")).status).toBe(201);
    const res = await postNote(t, "refused", "a forbidden word");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text).error.code).toBe("internal_error");
    expect(text).not.toContain("may not say");

    expect(await noteCount(t)).toBe(1);
    expect((await t.fetch("/api/v1/notes/refused")).status).toBe(404);
    expect(await rowIds("indexer_rows")).toEqual(["fine"]);
    expect(seen).toEqual([{ id: "fine", stored: true }]);
    expect(await hookFailures(t, "notes", "article:commit")).toBeUndefined();
  });

  it("fail the write when a required subscriber of another plugin throws: nothing of the change commits", async () => {
    const indexer = committer("indexer", ({ article, trx }) => insertRow(trx, "indexer_rows", article.id));
    const outbox = committer(
      "outbox",
      async ({ article, trx }) => {
        await insertRow(trx, "outbox_rows", article.id);
        if (article.id === "lost") throw new Error("outbox full");
      },
      { required: true },
    );
    t = await createTestVellum({ plugins: [notesPlugin(), indexer, outbox] });

    expect((await postNote(t, "kept")).status).toBe(201);
    expect((await postNote(t, "lost")).status).toBe(500);
    expect(await noteCount(t)).toBe(1);
    expect(await rowIds("outbox_rows")).toEqual(["kept"]);
    expect(await rowIds("indexer_rows")).toEqual(["kept"]);
    expect(await hookFailures(t, "outbox", "article:commit")).toBeUndefined();
  });

  it("fail the write when a required flush fails: neither the change nor what the flush wrote commits", async () => {
    const outbox = committer(
      "outbox",
      ({ article, trx }) =>
        collectForCommit(
          trx,
          "outbox:rows",
          article.id,
          async (flushTrx, ids: string[]) => {
            await flushTrx
              .insertInto("outbox_rows")
              .values(ids.map((id) => ({ id })))
              .execute();
            if (ids.includes("lost")) throw new Error("outbox full");
          },
          { required: true },
        ),
      { required: true },
    );
    t = await createTestVellum({ plugins: [notesPlugin(), outbox] });

    expect((await postNote(t, "kept")).status).toBe(201);
    expect((await postNote(t, "lost")).status).toBe(500);
    expect(await noteCount(t)).toBe(1);
    expect(await rowIds("outbox_rows")).toEqual(["kept"]);
  });

  it("refuse a required subscriber on a hook that is not a commit hook", async () => {
    const wrong = definePlugin({
      name: "wrong",
      setup(ctx) {
        ctx.hooks.hook("article:afterCreate", () => undefined, { required: true });
      },
    })();
    await expect(createTestVellum({ plugins: [notesPlugin(), wrong] })).rejects.toMatchObject({
      message: expect.stringContaining("only commit hooks take a required subscriber"),
    });
  });

  it("flush what subscribers collected once, before the commit, with the items of every subscriber", async () => {
    const flushes: string[][] = [];
    const tally = async (trx: AnyDb, ids: string[]) => {
      flushes.push(ids);
      await trx
        .insertInto("alpha_rows")
        .values(ids.map((id) => ({ id })))
        .execute();
    };
    const alpha = committer("alpha", ({ article, trx }) =>
      collectForCommit(trx, "tally", `alpha:${article.id}`, tally),
    );
    const beta = committer("beta", ({ article, trx }) => collectForCommit(trx, "tally", `beta:${article.id}`, tally));
    t = await createTestVellum({ plugins: [notesPlugin(), alpha, beta] });

    expect((await postNote(t, "n1")).status).toBe(201);
    expect(flushes).toEqual([["alpha:n1", "beta:n1"]]);
    expect(await rowIds("alpha_rows")).toEqual(["alpha:n1", "beta:n1"]);
  });

  it("roll a failing flush back to its savepoint and report it as the collecting plugin's; the write commits", async () => {
    const broken = committer("broken", ({ article, trx }) =>
      collectForCommit(trx, "broken:tally", article.id, async (flushTrx, ids: string[]) => {
        await flushTrx
          .insertInto("broken_rows")
          .values(ids.map((id) => ({ id })))
          .execute();
        throw new Error("tally table locked");
      }),
    );
    t = await createTestVellum({ plugins: [notesPlugin(), broken] });

    expect((await postNote(t, "n1")).status).toBe(201);
    expect(await noteCount(t)).toBe(1);
    expect(await rowIds("broken_rows")).toEqual([]);
    expect(t.errors).toEqual([
      expect.objectContaining({
        plugin: "broken",
        error: new Error("tally table locked"),
        tags: expect.objectContaining({ flush: "broken:tally" }),
      }),
    ]);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { definePlugin, isIsolatedHook } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { notesPlugin } from "./fixtures/notes-plugin.js";

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function createNote(id: string) {
  if (!t) throw new Error("no instance");
  return t.fetch("/api/v1/notes", { method: "POST", json: { id, body: "text" }, headers: await t.writeHeaders() });
}

async function count(): Promise<number> {
  const res = await t!.fetch("/api/v1/notes-count");
  return (await res.json()).count;
}

describe("hook kinds", () => {
  it("classifies after-hooks and announcements as isolated, everything else as serial", () => {
    expect(isIsolatedHook("article:afterCreate")).toBe(true);
    expect(isIsolatedHook("health:check")).toBe(true);
    expect(isIsolatedHook("vellum:error")).toBe(true);
    expect(isIsolatedHook("article:commit")).toBe(false);
    expect(isIsolatedHook("article:beforeCreate")).toBe(false);
    expect(isIsolatedHook("article:afterwards")).toBe(false);
  });
});

describe("in-transaction commit hooks", () => {
  it("commit together with the write", async () => {
    const seen: string[] = [];
    const indexer = definePlugin({
      name: "indexer",
      setup(ctx) {
        ctx.migrations({
          "0001_init": {
            up: (db) =>
              db.schema
                .createTable("indexer_rows")
                .addColumn("id", "text", (c) => c.primaryKey())
                .execute(),
          },
        });
        ctx.hooks.hook("article:commit", async ({ article, trx }) => {
          await trx.insertInto("indexer_rows").values({ id: article.id }).execute();
          seen.push(article.id);
        });
      },
    });
    t = await createTestVellum({ plugins: [notesPlugin(), indexer()] });
    expect((await createNote("n1")).status).toBe(201);
    const rows = await t.vellum.db().selectFrom("indexer_rows").selectAll().execute();
    expect(rows).toEqual([{ id: "n1" }]);
    expect(seen).toEqual(["n1"]);
  });

  it("roll the write back when a subscriber throws", async () => {
    const veto = definePlugin({
      name: "veto",
      setup(ctx) {
        ctx.hooks.hook("article:commit", ({ article }) => {
          if (article.id === "bad") throw new Error("index full");
        });
      },
    });
    t = await createTestVellum({ plugins: [notesPlugin(), veto()] });
    expect((await createNote("good")).status).toBe(201);
    const res = await createNote("bad");
    expect(res.status).toBe(500);
    expect((await res.json()).error.code).toBe("internal_error");
    expect(await count()).toBe(1);
    expect((await t.fetch("/api/v1/notes/bad")).status).toBe(404);
    t.errors.splice(0);
  });
});

describe("after-commit hooks", () => {
  it("isolate a failing subscriber: the request succeeds and the others still run", async () => {
    const calls: string[] = [];
    const failing = definePlugin({
      name: "failing",
      setup(ctx) {
        ctx.hooks.hook("article:afterCreate", () => {
          calls.push("failing");
          throw new Error("webhook receiver down");
        });
      },
    });
    const healthy = definePlugin({
      name: "healthy",
      setup(ctx) {
        ctx.hooks.hook("article:afterCreate", ({ article }) => void calls.push(`healthy:${article.id}`));
      },
    });
    t = await createTestVellum({ plugins: [notesPlugin(), failing(), healthy()] });
    const res = await createNote("n2");
    expect(res.status).toBe(201);
    expect(calls).toEqual(["failing", "healthy:n2"]);
    expect(await count()).toBe(1);
    expect(t.errors).toHaveLength(1);
    expect(t.errors[0]).toMatchObject({ plugin: "failing", hook: "article:afterCreate" });
    const metrics = await t.vellum.metrics.registry.metrics();
    expect(metrics).toContain('service_hook_failures_total{plugin="failing",hook="article:afterCreate"} 1');
    t.errors.splice(0);
  });

  it("unregisters every hook on close", async () => {
    let calls = 0;
    const p = definePlugin({
      name: "counter",
      setup: (ctx) => void ctx.hooks.hook("article:afterCreate", () => void calls++),
    });
    t = await createTestVellum({ plugins: [p()] });
    const hooks = t.vellum.hooks;
    const payload = {
      article: { id: "x", title: "", slug: "x", content: "", tags: [], created_at: "", updated_at: "" },
      context: {},
    };
    await hooks.callHook("article:afterCreate", payload);
    expect(calls).toBe(1);
    await t.close();
    t = undefined;
    await hooks.callHook("article:afterCreate", payload);
    expect(calls).toBe(1);
  });
});

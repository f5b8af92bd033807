import type { ArticleRecord } from "@vellum/core";
import type { TestVellum } from "@vellum/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTICLES, bootArticles, create, del, put } from "./helpers.js";

interface Seen {
  hook: string;
  op?: string;
  article: ArticleRecord;
  previous?: ArticleRecord;
  /** Whether the article row was visible where the hook ran (in its transaction, or after commit). */
  visible: boolean;
}

describe("article hooks", () => {
  let t: TestVellum;
  let seen: Seen[];

  beforeEach(async () => {
    t = await bootArticles();
    seen = [];
    const hooks = t.vellum.hooks;
    const visibleIn = async (db: ReturnType<TestVellum["vellum"]["db"]>, article: ArticleRecord) =>
      (await db.selectFrom("articles_items").select("slug").where("id", "=", article.id).executeTakeFirst())?.slug ===
      article.slug;
    hooks.hook("article:commit", async ({ op, article, previous, trx }) => {
      seen.push({ hook: "commit", op, article, previous, visible: await visibleIn(trx, article) });
    });
    hooks.hook("article:afterCreate", async ({ article }) => {
      seen.push({ hook: "afterCreate", article, visible: await visibleIn(t.vellum.db(), article) });
    });
    hooks.hook("article:afterUpdate", async ({ article, previous }) => {
      seen.push({ hook: "afterUpdate", article, previous, visible: await visibleIn(t.vellum.db(), article) });
    });
    hooks.hook("article:afterDelete", async ({ article }) => {
      seen.push({ hook: "afterDelete", article, visible: await visibleIn(t.vellum.db(), article) });
    });
  });

  afterEach(async () => {
    await t.close();
  });

  it("create fires article:commit inside the transaction and article:afterCreate after commit, with the full article", async () => {
    const article = await create(t, "hooked", { tags: ["h"] });
    expect(seen).toEqual([
      { hook: "commit", op: "create", article, previous: undefined, visible: true },
      { hook: "afterCreate", article, visible: true },
    ]);
    expect(t.errors).toEqual([]);
  });

  it("update fires commit and afterUpdate with the new and the previous version", async () => {
    const before = await create(t, "to-update");
    seen.length = 0;
    const after = await (await put(t, "to-update", { title: "New title", slug: "updated" })).json();
    expect(seen).toEqual([
      { hook: "commit", op: "update", article: after, previous: before, visible: true },
      { hook: "afterUpdate", article: after, previous: before, visible: true },
    ]);
    expect(t.errors).toEqual([]);
  });

  it("delete fires commit (row already gone in the transaction) and afterDelete with the deleted article", async () => {
    const article = await create(t, "to-delete");
    seen.length = 0;
    expect((await del(t, "to-delete")).status).toBe(204);
    expect(seen).toEqual([
      { hook: "commit", op: "delete", article, previous: undefined, visible: false },
      { hook: "afterDelete", article, visible: false },
    ]);
    expect(t.errors).toEqual([]);
  });

  it("a throwing article:commit subscriber of another plugin is rolled back to its savepoint; the update stands", async () => {
    await create(t, "guarded");
    seen.length = 0;
    const off = t.vellum.hooks.hook("article:commit", async ({ trx, article }) => {
      await trx
        .updateTable("articles_items")
        .set({ title: "Written by the failing subscriber" })
        .where("id", "=", article.id)
        .execute();
      throw new Error("index unavailable");
    });
    const res = await put(t, "guarded", { title: "Stored" });
    expect(res.status).toBe(200);
    off();
    expect((await (await t.fetch(`${ARTICLES}/guarded`)).json()).title).toBe("Stored");
    expect(seen.map((s) => s.hook)).toEqual(["commit", "afterUpdate"]);
    expect(t.errors).toMatchObject([
      { plugin: "host", hook: "article:commit", error: { message: "index unavailable" } },
    ]);
  });

  it("a throwing after-hook subscriber is isolated: the write stands and the error is reported", async () => {
    t.vellum.hooks.hook("article:afterCreate", () => {
      throw new Error("notifier down");
    });
    const article = await create(t, "isolated");
    expect(article.slug).toBe("isolated");
    expect(seen.map((s) => s.hook)).toEqual(["commit", "afterCreate"]);
    expect(t.errors).toMatchObject([{ hook: "article:afterCreate", error: { message: "notifier down" } }]);
  });

  it("no hook fires for rejected writes or no-op updates", async () => {
    await create(t, "quiet");
    seen.length = 0;
    await put(t, "quiet", {});
    await put(t, "quiet", { slug: "Bad Slug" });
    await put(t, "missing", { title: "x" });
    await del(t, "missing");
    expect(seen).toEqual([]);
    expect(t.errors).toEqual([]);
  });
});

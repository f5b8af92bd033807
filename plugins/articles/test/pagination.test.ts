import type { ArticleRecord } from "@vellum/core";
import type { TestVellum } from "@vellum/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTICLES, articleBody, bootArticles, errorOf, post, waitForJob } from "./helpers.js";

type Summary = Omit<ArticleRecord, "content">;
interface Page {
  articles: Summary[];
  next_cursor: string | null;
}

async function page(t: TestVellum, query: string): Promise<Page> {
  const res = await t.fetch(`${ARTICLES}?${query}`);
  expect(res.status).toBe(200);
  return res.json();
}

/** Follows next_cursor from the first page to the last; returns every page. */
async function walk(t: TestVellum, query: string, between?: () => Promise<void>): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const suffix: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
    const current = await page(t, `${query}${suffix}`);
    pages.push(current);
    cursor = current.next_cursor;
    await between?.();
  } while (cursor !== null);
  return pages;
}

/** Creates `count` articles (slugs `p-00`…) in order; odd ones also get tag `odd`. */
async function seed(t: TestVellum, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const slug = `p-${String(i).padStart(2, "0")}`;
    const res = await post(t, articleBody(slug, { tags: i % 2 ? ["all", "odd"] : ["all"] }));
    ids.push((await res.json()).id);
  }
  for (const id of ids) await waitForJob(t, id);
  return ids;
}

describe("list pages", () => {
  let t: TestVellum;

  beforeEach(async () => {
    t = await bootArticles();
  });

  afterEach(async () => {
    expect(t.errors).toEqual([]);
    await t.close();
  });

  it("walks 45 articles page by page, newest first, with no duplicate and no gap", async () => {
    const ids = await seed(t, 45);
    const pages = await walk(t, "limit=10");
    expect(pages.map((p) => p.articles.length)).toEqual([10, 10, 10, 10, 5]);
    expect(pages.flatMap((p) => p.articles.map((a) => a.id))).toEqual([...ids].reverse());
    expect(pages.at(-1)?.next_cursor).toBeNull();
    for (const summary of pages[0]?.articles ?? []) expect(summary).not.toHaveProperty("content");
  });

  it("default page size is 20 and a full last page still ends with next_cursor null", async () => {
    await seed(t, 40);
    const pages = await walk(t, "");
    expect(pages.map((p) => p.articles.length)).toEqual([20, 20]);
    expect(pages[1]?.next_cursor).toBeNull();
  });

  it("keeps no duplicate and no gap while new articles are created during the walk", async () => {
    const ids = await seed(t, 45);
    let n = 0;
    const created: string[] = [];
    const pages = await walk(t, "limit=7", async () => {
      const res = await post(t, articleBody(`during-${n++}`));
      const { id } = await res.json();
      created.push(id);
      await waitForJob(t, id);
    });
    const seen = pages.flatMap((p) => p.articles.map((a) => a.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...ids].reverse());
    for (const id of created) expect(seen).not.toContain(id);
    const fresh = await page(t, "limit=100");
    expect(fresh.articles).toHaveLength(45 + created.length);
  });

  it("filters by tag, pages the filtered list with cursors, and matches tags exactly", async () => {
    const ids = await seed(t, 45);
    const odd = ids.filter((_, i) => i % 2 === 1).reverse();
    const pages = await walk(t, "tag=odd&limit=5");
    expect(pages.map((p) => p.articles.length)).toEqual([5, 5, 5, 5, 2]);
    const seen = pages.flatMap((p) => p.articles);
    expect(seen.map((a) => a.id)).toEqual(odd);
    for (const a of seen) expect(a.tags).toContain("odd");
    expect((await page(t, "tag=od")).articles).toEqual([]);
    expect((await page(t, "tag=ODD")).articles).toEqual([]);
    expect((await page(t, `tag=${encodeURIComponent(" odd ")}&limit=1`)).articles).toHaveLength(1);
  });

  it("rejects cursors it did not issue with invalid_cursor", async () => {
    await seed(t, 5);
    const first = await page(t, "limit=2");
    const cursor = first.next_cursor as string;
    const [id, mac] = cursor.split(".") as [string, string];
    const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const flipped = `${mac.startsWith("A") ? "B" : "A"}${mac.slice(1)}`;
    // Same 16 bytes, but the unused low bits of the last character set: not our spelling.
    const nonCanonical = `${mac.slice(0, -1)}${B64URL[B64URL.indexOf(mac.at(-1) as string) + 1]}`;
    const forged = [
      "",
      "garbage",
      id,
      `${id}.`,
      `${id}.${flipped}`,
      `${id}.${nonCanonical}`,
      `${id.slice(0, -1)}${id.endsWith("0") ? "1" : "0"}.${mac}`,
      `${cursor}.extra`,
      `01ARZ3NDEKTSV4RRFFQ69G5FAV.${mac}`,
      Buffer.from(id).toString("base64url"),
      `${id.toLowerCase()}.${mac}`,
      `${id}.${mac}==`,
    ];
    for (const bad of forged) {
      const res = await t.fetch(`${ARTICLES}?limit=2&cursor=${encodeURIComponent(bad)}`);
      expect(await errorOf(res), bad).toMatchObject({ status: 400, code: "invalid_cursor" });
    }
    expect((await page(t, `limit=2&cursor=${encodeURIComponent(cursor)}`)).articles).toHaveLength(2);
  });

  it("a cursor only continues the listing that issued it (tag filter included)", async () => {
    await seed(t, 6);
    const all = await page(t, "limit=2");
    const tagged = await page(t, "tag=all&limit=2");
    const plain = encodeURIComponent(all.next_cursor as string);
    const filtered = encodeURIComponent(tagged.next_cursor as string);
    expect((await errorOf(await t.fetch(`${ARTICLES}?tag=all&cursor=${plain}`))).code).toBe("invalid_cursor");
    expect((await errorOf(await t.fetch(`${ARTICLES}?cursor=${filtered}`))).code).toBe("invalid_cursor");
    expect((await errorOf(await t.fetch(`${ARTICLES}?tag=odd&cursor=${filtered}`))).code).toBe("invalid_cursor");
  });

  it("cursors survive a restart (the signing key is kept in the data dir)", async () => {
    await seed(t, 3);
    const first = await page(t, "limit=1");
    const { createTestVellum } = await import("@vellum/core/testing");
    const { articles } = await import("../src/index.js");
    const dataDir = t.dataDir;
    await t.vellum.close();
    const again = await createTestVellum({ plugins: [articles()], dataDir });
    try {
      const res = await again.fetch(`${ARTICLES}?limit=1&cursor=${encodeURIComponent(first.next_cursor as string)}`);
      expect(res.status).toBe(200);
      expect((await res.json()).articles[0].slug).toBe("p-01");
    } finally {
      await again.close();
    }
  });
});

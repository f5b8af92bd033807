import type { ArticleRecord } from "@vellum/core";
import type { TestVellum } from "@vellum/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARTICLES, bootArticles, create } from "./helpers.js";

/**
 * Reads answer with JSON rendered by SQLite (`json_object`), not by `JSON.stringify`. These
 * texts are where two JSON encoders can differ: escapes, control characters, non-BMP and
 * separator characters, backslashes, quotes, text that looks like JSON.
 */
const TRICKY = [
  'quote " and backslash \\ and slash /',
  "tab\tnewline\ncarriage\rform\fbackspace\b",
  "nul-free controls \u0001 \u001f \u007f",
  "line separators \u2028 \u2029",
  "accents é ü ñ, CJK 漢字, emoji 🚀👩‍💻, flags 🇫🇷",
  '{"looks":"like json"} [1,2] null true',
  "<p>html &amp; entities &lt;</p>",
  "   leading and trailing spaces   ",
];

describe("articles rendered as JSON by the database", () => {
  let t: TestVellum;
  const created: ArticleRecord[] = [];
  /** The record as the `articles` service returns it (objects, serialised by JS). */
  const record = async (slug: string) => {
    const found = await t.vellum.service("articles")?.getBySlug(slug);
    if (!found) throw new Error(`no article ${slug}`);
    return found;
  };

  beforeAll(async () => {
    t = await bootArticles();
    for (const [i, text] of TRICKY.entries()) {
      created.push(
        await create(t, `tricky-${i}`, { title: text, content: `<p>${text}</p>`, tags: [text.slice(0, 20)] }),
      );
    }
  });

  afterAll(async () => {
    expect(t.errors).toEqual([]);
    await t.close();
  });

  it("GET one answers exactly the bytes JSON.stringify gives for the record", async () => {
    for (const article of created) {
      const res = await t.fetch(`${ARTICLES}/${article.slug}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      const text = await res.text();
      expect(text).toBe(JSON.stringify(await record(article.slug)));
    }
  });

  it("a list page answers exactly the bytes JSON.stringify gives for the summaries", async () => {
    const res = await t.fetch(`${ARTICLES}?limit=100`);
    const text = await res.text();
    const summaries = [];
    for (const article of [...created].reverse()) {
      const { content: _content, ...summary } = await record(article.slug);
      summaries.push(summary);
    }
    expect(text).toBe(JSON.stringify({ articles: summaries, next_cursor: null }));
  });

  it("round-trips every tricky text unchanged", async () => {
    for (const [i, text] of TRICKY.entries()) {
      const body = (await (await t.fetch(`${ARTICLES}/tricky-${i}`)).json()) as ArticleRecord;
      expect(body.title).toBe(text.trim());
      expect(body.tags).toEqual([text.slice(0, 20).trim()]);
      expect(body).toEqual(await record(`tricky-${i}`));
    }
  });
});

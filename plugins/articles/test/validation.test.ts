import type { TestVellum } from "@vellum/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARTICLES, articleBody, bootArticles, create, errorOf, post, put, queuedJobCount } from "./helpers.js";

const valid = articleBody("valid-slug");
const without = (field: string) => Object.fromEntries(Object.entries(valid).filter(([k]) => k !== field));
const MIB = 1024 * 1024;

interface BadCase {
  name: string;
  body: unknown;
  code: string;
  field?: string;
}

const badCreates: BadCase[] = [
  { name: "missing title", body: without("title"), code: "validation_failed", field: "title" },
  { name: "missing slug", body: without("slug"), code: "validation_failed", field: "slug" },
  { name: "missing content", body: without("content"), code: "validation_failed", field: "content" },
  { name: "title null", body: { ...valid, title: null }, code: "validation_failed", field: "title" },
  { name: "title a number", body: { ...valid, title: 42 }, code: "validation_failed", field: "title" },
  { name: "title empty", body: { ...valid, title: "" }, code: "validation_failed", field: "title" },
  { name: "title only spaces", body: { ...valid, title: " \t\n " }, code: "validation_failed", field: "title" },
  { name: "title of 301 chars", body: { ...valid, title: "t".repeat(301) }, code: "validation_failed", field: "title" },
  { name: "slug null", body: { ...valid, slug: null }, code: "validation_failed", field: "slug" },
  { name: "slug a number", body: { ...valid, slug: 7 }, code: "validation_failed", field: "slug" },
  { name: "slug an array", body: { ...valid, slug: ["a"] }, code: "validation_failed", field: "slug" },
  { name: "slug empty", body: { ...valid, slug: "" }, code: "invalid_slug" },
  { name: "slug of 201 chars", body: { ...valid, slug: "a".repeat(201) }, code: "invalid_slug" },
  { name: "slug with upper case", body: { ...valid, slug: "Hello" }, code: "invalid_slug" },
  { name: "slug with a space", body: { ...valid, slug: "hello world" }, code: "invalid_slug" },
  { name: "slug with a leading space", body: { ...valid, slug: " hello" }, code: "invalid_slug" },
  { name: "slug with a trailing newline", body: { ...valid, slug: "hello\n" }, code: "invalid_slug" },
  { name: "slug with unicode letters", body: { ...valid, slug: "héllo" }, code: "invalid_slug" },
  { name: "slug with a fullwidth digit", body: { ...valid, slug: "a１" }, code: "invalid_slug" },
  { name: "slug with an emoji", body: { ...valid, slug: "a🙂" }, code: "invalid_slug" },
  { name: "slug with a slash", body: { ...valid, slug: "a/b" }, code: "invalid_slug" },
  { name: "slug with a dot", body: { ...valid, slug: "a.b" }, code: "invalid_slug" },
  { name: "slug with a percent escape", body: { ...valid, slug: "a%20b" }, code: "invalid_slug" },
  { name: "content null", body: { ...valid, content: null }, code: "validation_failed", field: "content" },
  { name: "content a number", body: { ...valid, content: 1 }, code: "validation_failed", field: "content" },
  {
    name: "content an object",
    body: { ...valid, content: { html: "x" } },
    code: "validation_failed",
    field: "content",
  },
  {
    name: "content of 1 MiB + 1 byte",
    body: { ...valid, content: "x".repeat(MIB + 1) },
    code: "validation_failed",
    field: "content",
  },
  {
    name: "content over 1 MiB in UTF-8 bytes though under 1 Mi characters",
    body: { ...valid, content: "é".repeat(MIB / 2 + 1) },
    code: "validation_failed",
    field: "content",
  },
  { name: "tags null", body: { ...valid, tags: null }, code: "validation_failed", field: "tags" },
  { name: "tags a string", body: { ...valid, tags: "news" }, code: "validation_failed", field: "tags" },
  { name: "tags an object", body: { ...valid, tags: { 0: "a" } }, code: "validation_failed", field: "tags" },
  {
    name: "21 tags",
    body: { ...valid, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
    code: "validation_failed",
    field: "tags",
  },
  { name: "a non-string tag", body: { ...valid, tags: ["ok", 3] }, code: "validation_failed", field: "tags[1]" },
  { name: "a null tag", body: { ...valid, tags: [null] }, code: "validation_failed", field: "tags[0]" },
  { name: "an empty tag", body: { ...valid, tags: [""] }, code: "validation_failed", field: "tags[0]" },
  { name: "a blank tag", body: { ...valid, tags: ["  "] }, code: "validation_failed", field: "tags[0]" },
  {
    name: "a tag of 65 chars",
    body: { ...valid, tags: ["g".repeat(65)] },
    code: "validation_failed",
    field: "tags[0]",
  },
];

describe("bad input: each gets its contract code and nothing is queued", () => {
  let t: TestVellum;

  beforeAll(async () => {
    t = await bootArticles();
    await create(t, "existing");
  });

  afterAll(async () => {
    expect(t.errors).toEqual([]);
    await t.close();
  });

  async function expectNothingQueued(action: () => Promise<void>): Promise<void> {
    const jobs = await queuedJobCount(t);
    await action();
    expect(await queuedJobCount(t)).toBe(jobs);
    expect(await t.vellum.service("articles")?.count()).toBe(1);
  }

  it.each(badCreates)("POST with $name → $code", async ({ body, code, field }) => {
    await expectNothingQueued(async () => {
      const error = await errorOf(await post(t, body));
      expect(error).toMatchObject({ status: 400, code });
      if (field) expect(error.details).toContainEqual({ field, message: expect.any(String) });
      else expect(error.details).toBeUndefined();
    });
  });

  it("every invalid field is reported at once", async () => {
    const error = await errorOf(await post(t, { title: "", content: 5, tags: "x", slug: undefined }));
    expect(error.code).toBe("validation_failed");
    expect((error.details as Array<{ field: string }>).map((d) => d.field)).toEqual([
      "title",
      "slug",
      "content",
      "tags",
    ]);
  });

  it("a malformed slug wins over other problems: invalid_slug", async () => {
    expect((await errorOf(await post(t, { slug: "Bad Slug", title: 1 }))).code).toBe("invalid_slug");
  });

  it("the invalid_slug message says what a slug must be", async () => {
    const res = await post(t, { ...valid, slug: "NOPE" });
    const body = await res.json();
    expect(body.error.message).toMatch(/lowercase alphanumeric with hyphens or underscores/);
    expect(body.error.docs).toBe("/docs/api/errors#invalid_slug");
  });

  it("bodies that are not JSON objects are invalid_json; other content types 415; over 2 MiB 413", async () => {
    await expectNothingQueued(async () => {
      const headers = await t.writeHeaders({ "content-type": "application/json" });
      for (const body of ["{not json", "[1,2]", "null", '"text"', ""]) {
        const res = await t.fetch(ARTICLES, { method: "POST", body, headers });
        expect(await errorOf(res)).toMatchObject({ status: 400, code: "invalid_json" });
      }
      const form = await t.writeHeaders({ "content-type": "text/plain" });
      const res = await t.fetch(ARTICLES, { method: "POST", body: JSON.stringify(valid), headers: form });
      expect(await errorOf(res)).toMatchObject({ status: 415, code: "unsupported_media_type" });
      const huge = await post(t, { ...valid, content: "x".repeat(2 * MIB + 10) });
      expect(await errorOf(huge)).toMatchObject({ status: 413, code: "payload_too_large" });
    });
  });

  it("boundaries are accepted: 300-char title, 200-char slug, 1 MiB content, 20 tags of 64 chars", async () => {
    const slug = "b".repeat(200);
    const tags = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(64, "x"));
    const article = await create(t, slug, { title: "T".repeat(300), content: "y".repeat(MIB), tags });
    expect(article.title).toHaveLength(300);
    expect(article.content).toHaveLength(MIB);
    expect(article.tags).toEqual(tags);
    await t.fetch(`${ARTICLES}/${slug}`, { method: "DELETE", headers: await t.writeHeaders() });
  });

  it("unknown fields are ignored", async () => {
    const article = await create(t, "extra-fields", { id: "01ARZ3NDEKTSV4RRFFQ69G5FAV", created_at: "1999", x: 1 });
    expect(article.id).not.toBe("01ARZ3NDEKTSV4RRFFQ69G5FAV");
    expect(article.created_at).not.toBe("1999");
    expect(article).not.toHaveProperty("x");
    await t.fetch(`${ARTICLES}/extra-fields`, { method: "DELETE", headers: await t.writeHeaders() });
  });

  it.each([
    { name: "title null", body: { title: null }, code: "validation_failed", field: "title" },
    { name: "title empty", body: { title: "" }, code: "validation_failed", field: "title" },
    { name: "content null", body: { content: null }, code: "validation_failed", field: "content" },
    { name: "tags not an array", body: { tags: "a" }, code: "validation_failed", field: "tags" },
    { name: "slug null", body: { slug: null }, code: "validation_failed", field: "slug" },
    { name: "slug with unicode", body: { slug: "naïve" }, code: "invalid_slug" },
    { name: "slug of 201 chars", body: { slug: "s".repeat(201) }, code: "invalid_slug" },
  ])("PUT with $name → $code and the article is unchanged", async ({ body, code, field }) => {
    const before = await (await t.fetch(`${ARTICLES}/existing`)).json();
    const error = await errorOf(await put(t, "existing", body));
    expect(error).toMatchObject({ status: 400, code });
    if (field) expect(error.details).toContainEqual({ field, message: expect.any(String) });
    expect(await (await t.fetch(`${ARTICLES}/existing`)).json()).toEqual(before);
  });

  it("PUT and DELETE with a malformed path slug are invalid_slug", async () => {
    expect((await errorOf(await put(t, "Bad%20Slug", { title: "x" }))).code).toBe("invalid_slug");
    const res = await t.fetch(`${ARTICLES}/%C3%A9t%C3%A9`, { method: "DELETE", headers: await t.writeHeaders() });
    expect(await errorOf(res)).toMatchObject({ status: 400, code: "invalid_slug" });
  });

  it.each(["0", "101", "-1", "abc", "1.5", "", "1e2", " 5"])(
    "list with limit=%j → invalid_parameter",
    async (limit) => {
      const res = await t.fetch(`${ARTICLES}?limit=${encodeURIComponent(limit)}`);
      expect(await errorOf(res)).toMatchObject({ status: 400, code: "invalid_parameter" });
    },
  );

  it.each(["", "   ", "t".repeat(65)])("list with tag=%j → invalid_parameter", async (tag) => {
    const res = await t.fetch(`${ARTICLES}?tag=${encodeURIComponent(tag)}`);
    expect(await errorOf(res)).toMatchObject({ status: 400, code: "invalid_parameter" });
  });

  it("limit 1 and 100 are accepted", async () => {
    expect((await t.fetch(`${ARTICLES}?limit=1`)).status).toBe(200);
    expect((await t.fetch(`${ARTICLES}?limit=100`)).status).toBe(200);
  });
});

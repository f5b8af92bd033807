import { afterEach, describe, expect, it } from "vitest";
import { article, boot, type Harness, slugs } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.t.close();
  h = undefined;
});

describe("GET /api/v1/search", () => {
  it("answers the contract's shape, without caching", async () => {
    h = await boot();
    const created = await h.articles.create(article("hello", "Hello world", "<p>A first <b>post</b>.</p>", ["intro"]));
    const res = await h.t.fetch("/api/v1/search?q=hello");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body).toEqual({
      results: [
        {
          id: created.id,
          slug: "hello",
          title: "Hello world",
          tags: ["intro"],
          snippet: "A first post.",
          score: expect.any(Number),
          created_at: created.created_at,
          updated_at: created.updated_at,
        },
      ],
      total: 1,
      limit: 20,
      offset: 0,
    });
    expect(body.results[0].score).toBeGreaterThan(0);
  });

  it("ranks a title hit above a body hit, and a tag hit between them", async () => {
    h = await boot();
    await h.articles.create(article("body-hit", "Gardening notes", "<p>The telescope was left in the shed.</p>"));
    await h.articles.create(article("title-hit", "The telescope", "<p>Notes about lenses and mirrors.</p>"));
    await h.articles.create(article("tag-hit", "Night sky", "<p>Stars and planets.</p>", ["telescope"]));
    for (let i = 0; i < 4; i++) await h.articles.create(article(`other-${i}`, "Cooking", "<p>Bread and butter.</p>"));
    const body = await h.search("telescope ");
    expect(slugs(body)).toEqual(["title-hit", "tag-hit", "body-hit"]);
    const scores = body.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("matches stems and ignores case and diacritics", async () => {
    h = await boot();
    await h.articles.create(article("runner", "Morning", "<p>She was running along the river past the café.</p>"));
    expect(slugs(await h.search("runs "))).toEqual(["runner"]);
    expect(slugs(await h.search("RUN "))).toEqual(["runner"]);
    expect(slugs(await h.search("cafe "))).toEqual(["runner"]);
    expect(slugs(await h.search("rivers "))).toEqual(["runner"]);
  });

  it("completes the last word while it is typed", async () => {
    h = await boot();
    await h.articles.create(article("astro", "Astronomy for beginners", "<p>Looking up.</p>"));
    await h.articles.create(article("astro-2", "Night", "<p>An astronaut floats.</p>"));
    await h.articles.create(article("other", "Gardening", "<p>Soil and seeds.</p>"));
    expect(slugs(await h.search("astro")).sort()).toEqual(["astro", "astro-2"]);
    expect(slugs(await h.search("astron"))).toEqual(expect.arrayContaining(["astro", "astro-2"]));
    expect(slugs(await h.search("beginners astrono"))).toEqual(["astro"]);
    // A finished word (followed by a space) is not completed.
    expect(slugs(await h.search("astro "))).toEqual([]);
  });

  it("corrects a misspelled word that matches nothing", async () => {
    h = await boot();
    await h.articles.create(article("search", "Full-text search", "<p>How a search engine ranks pages.</p>"));
    await h.articles.create(article("other", "Gardening", "<p>Soil and seeds.</p>"));
    expect(slugs(await h.search("serach"))).toEqual(["search"]);
    expect(slugs(await h.search("engnie ranks"))).toEqual(["search"]);
    expect(slugs(await h.search("searhc "))).toEqual(["search"]);
    expect((await h.search("qqqqzz")).results).toEqual([]);
  });

  it("finds articles by tag", async () => {
    h = await boot();
    await h.articles.create(article("tagged", "A day out", "<p>Nothing special.</p>", ["photography", "travel tips"]));
    await h.articles.create(article("untagged", "A day in", "<p>Nothing at all.</p>"));
    expect(slugs(await h.search("photography "))).toEqual(["tagged"]);
    expect(slugs(await h.search("tips "))).toEqual(["tagged"]);
  });

  it("marks matches in the snippet and escapes everything else", async () => {
    h = await boot();
    const content =
      "<p>Use &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot; with care; the <em>parser</em> parses it.</p>";
    await h.articles.create(article("escape", "Escaping", content));
    const [hit] = (await h.search("parsing ")).results;
    expect(hit?.snippet).toBe(
      "Use &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot; with care; the parser <mark>parses</mark> it.",
    );
    expect(hit?.snippet).not.toMatch(/<(?!\/?mark>)/);
  });

  it("cuts long bodies around the best match", async () => {
    h = await boot();
    const filler = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    await h.articles.create(article("long", "Long", `<p>${filler} the lighthouse keeper ${filler}</p>`));
    const [hit] = (await h.search("lighthouse ")).results;
    expect(hit?.snippet).toMatch(/^…word57 word58 word59 the <mark>lighthouse<\/mark> keeper word0 .*…$/);
  });

  it("pages with limit and offset and reports the total", async () => {
    h = await boot();
    for (let i = 0; i < 25; i++)
      await h.articles.create(article(`page-${i}`, `Page ${i}`, "<p>Shared harbour text.</p>"));
    const first = await h.search("harbour ", { limit: "10" });
    const third = await h.search("harbour ", { limit: "10", offset: "20" });
    const beyond = await h.search("harbour ", { limit: "10", offset: "40" });
    expect(first).toMatchObject({ total: 25, limit: 10, offset: 0 });
    expect(first.results).toHaveLength(10);
    expect(third.results).toHaveLength(5);
    expect(beyond).toMatchObject({ results: [], total: 25, offset: 40 });
    const all = new Set([
      ...slugs(first),
      ...slugs(await h.search("harbour ", { limit: "10", offset: "10" })),
      ...slugs(third),
    ]);
    expect(all.size).toBe(25);
  });

  it.each([
    ["q missing", ""],
    ["q empty", "q="],
    ["q over 256 characters", `q=${"a".repeat(257)}`],
    ["limit 0", "q=x&limit=0"],
    ["limit 101", "q=x&limit=101"],
    ["limit not a number", "q=x&limit=ten"],
    ["offset negative", "q=x&offset=-1"],
    ["offset over 10000", "q=x&offset=10001"],
  ])("rejects %s with invalid_parameter", async (_label, query) => {
    h = await boot();
    const res = await h.t.fetch(`/api/v1/search?${query}`);
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.code).toBe("invalid_parameter");
    expect(body.error.message).not.toContain("aaaa");
  });

  it("accepts 256 characters (code points) of q", async () => {
    h = await boot();
    const res = await h.t.fetch(`/api/v1/search?q=${encodeURIComponent("é".repeat(256))}`);
    expect(res.status).toBe(200);
  });

  it("treats FTS5 syntax in q as plain text and never errors", async () => {
    h = await boot();
    await h.articles.create(article("syntax", "Title near the end", "<p>Body and more body, or not.</p>", ["tag"]));
    const junk = Array.from({ length: 256 }, (_, i) => String.fromCharCode(33 + ((i * 7) % 94))).join("");
    const inputs = [
      '"',
      '"unterminated',
      "*",
      "title*",
      "NEAR(",
      "NEAR(title body, 2)",
      "title:",
      "title: body",
      "{title tags}: body",
      ")",
      "(",
      "AND OR NOT",
      "body AND",
      "NOT body",
      "^title",
      "body -title",
      "'; DROP TABLE search_generations; --",
      "\u0000\u0001\u0002",
      junk,
    ];
    for (const q of inputs) {
      const res = await h.t.fetch(`/api/v1/search?${new URLSearchParams({ q })}`);
      expect(res.status, q).toBe(200);
      const body = await res.json();
      expect(body.degraded, q).toBeUndefined();
    }
    expect(slugs(await h.search("title: body"))).toEqual(["syntax"]);
    expect(slugs(await h.search("near"))).toEqual(["syntax"]);
    expect(h.t.errors).toEqual([]);
  });

  it("reflects updates and deletes at once", async () => {
    h = await boot();
    await h.articles.create(article("changing", "Old title", "<p>The original zeppelin story.</p>"));
    await h.articles.create(article("staying", "Another", "<p>A zeppelin too.</p>"));
    await h.articles.update("changing", { title: "New title", content: "<p>A rewritten submarine story.</p>" });
    expect(slugs(await h.search("zeppelin "))).toEqual(["staying"]);
    expect((await h.search("submarine ")).results.map((r) => r.title)).toEqual(["New title"]);
    await h.articles.remove("changing");
    expect(slugs(await h.search("submarine "))).toEqual([]);
    await h.articles.remove("staying");
    expect((await h.search("zeppelin ")).total).toBe(0);
  });

  it("rate-limits to 10 requests per second per client address", async () => {
    h = await boot({ search: { rateLimit: { limit: 10, windowMs: 1000 } } });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await h.t.fetch("/api/v1/search?q=x")).status);
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    const limited = await h.t.fetch("/api/v1/search?q=x");
    expect(limited.status).toBe(429);
    expect((await limited.json()).error.code).toBe("rate_limited");
    expect(limited.headers.get("retry-after")).toBeTruthy();
    expect((await h.t.fetch("/api/v1/search?q=x", { clientAddress: "127.0.0.2" })).status).toBe(200);
  });
});

describe("options", () => {
  it.each([
    [{ path: "api/search" }, "pluginOptions.search.path"],
    [{ rateLimit: { limit: 0, windowMs: 1000 } }, "pluginOptions.search.rateLimit"],
    [{ reindexBatchSize: 0 }, "pluginOptions.search.reindexBatchSize"],
    [{ repairIntervalMs: -1 }, "pluginOptions.search.repairIntervalMs"],
  ])("refuses %o at start", async (options, path) => {
    await expect(boot({ search: options })).rejects.toThrow(path);
  });
});

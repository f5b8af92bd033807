import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Article, createClient, type VellumClient } from "../src/index.js";
import { API_KEY, type Front, PNG, recordingFetch, type RunningVellum, startFront, startVellum } from "./support.js";

// Every method against a real Vellum (default plugins) mounted under /cms behind a Node server, over real HTTP.

let server: RunningVellum;
let front: Front;
let client: VellumClient;
const recorder = recordingFetch();

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const input = (slug: string, tags: string[] = []) => ({
  title: `Title of ${slug}`,
  slug,
  content: `<p>Body of ${slug}</p><script>alert(1)</script>`,
  tags,
});

beforeAll(async () => {
  server = await startVellum();
  front = await startFront(server);
  client = createClient({ baseUrl: `${front.url}/cms/`, apiKey: API_KEY, fetch: recorder.fetch });
});

afterAll(async () => {
  await front?.close();
  await server?.close();
});

describe("articles", () => {
  it("create resolves to the 202 and applied() to the stored article; the job then says applied", async () => {
    const queued = await client.articles.create(input("first", ["news"]));
    expect(queued).toEqual({ id: expect.stringMatching(ULID), status: "queued", location: "/api/v1/articles/first" });

    const article = await client.articles.create(input("second", ["news"])).applied();
    expect(article).toEqual({
      id: expect.stringMatching(ULID),
      title: "Title of second",
      slug: "second",
      tags: ["news"],
      content: "<p>Body of second</p>",
      created_at: expect.stringMatching(ISO),
      updated_at: article.created_at,
    });
    expect(await client.jobs.get(article.id)).toEqual({ id: article.id, status: "applied" });
    expect(await client.articles.get("second")).toEqual(article);
    // Every request went under the mount prefix.
    expect(recorder.requests.every((r) => r.url.pathname.startsWith("/cms/"))).toBe(true);
  });

  it("update changes the given fields and renames; delete removes the article", async () => {
    const created = await client.articles.create(input("to-edit", ["a"])).applied();
    const updated = await client.articles.update("to-edit", { title: "Edited", slug: "edited" });
    expect(updated).toEqual({ ...created, title: "Edited", slug: "edited", updated_at: expect.stringMatching(ISO) });
    expect(updated.updated_at > created.updated_at).toBe(true);

    await expect(client.articles.delete("edited")).resolves.toBeUndefined();
    await expect(client.articles.get("edited")).rejects.toMatchObject({ status: 404, code: "not_found" });
  });

  it("list iterates every page of a tag, newest first; page() returns one page and its cursor", async () => {
    const slugs = ["p1", "p2", "p3", "p4", "p5"];
    for (const slug of slugs) await client.articles.create(input(slug, ["paged"])).applied();
    recorder.requests.length = 0;

    const seen: string[] = [];
    for await (const summary of client.articles.list({ tag: "paged", limit: 2 })) {
      expect(summary).not.toHaveProperty("content");
      seen.push(summary.slug);
    }
    expect(seen).toEqual([...slugs].reverse());
    expect(recorder.paths()).toEqual([
      "GET /cms/api/v1/articles?tag=paged&limit=2",
      expect.stringMatching(/^GET \/cms\/api\/v1\/articles\?tag=paged&limit=2&cursor=[\w.-]+$/),
      expect.stringMatching(/^GET \/cms\/api\/v1\/articles\?tag=paged&limit=2&cursor=[\w.-]+$/),
    ]);

    const first = await client.articles.page({ tag: "paged", limit: 3 });
    expect(first.articles.map((a) => a.slug)).toEqual(["p5", "p4", "p3"]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const rest: string[] = [];
    for await (const summary of client.articles.list({ tag: "paged", limit: 3, cursor: first.next_cursor! })) {
      rest.push(summary.slug);
    }
    expect(rest).toEqual(["p2", "p1"]);
    expect(await client.articles.page({ tag: "paged", limit: 3, cursor: first.next_cursor! })).toMatchObject({
      next_cursor: null,
    });
  });

  it("stops fetching pages when the loop breaks", async () => {
    recorder.requests.length = 0;
    for await (const summary of client.articles.list({ tag: "paged", limit: 1 })) {
      expect(summary.slug).toBe("p5");
      break;
    }
    expect(recorder.requests).toHaveLength(1);
  });
});

describe("the other routes", () => {
  let article: Article;

  beforeAll(async () => {
    const content = "<p>Seville oranges make the best marmalade.</p>";
    article = await client.articles.create({ ...input("searchable"), title: "Marmalade recipes", content }).applied();
  });

  it("search finds an applied article", async () => {
    const found = await client.search({ q: "marmalade", limit: 5 });
    expect(found).toEqual({
      results: [
        {
          id: article.id,
          slug: "searchable",
          title: "Marmalade recipes",
          tags: [],
          snippet: expect.stringContaining("best <mark>marmalade</mark>"),
          score: expect.any(Number),
          created_at: article.created_at,
          updated_at: article.updated_at,
        },
      ],
      total: 1,
      limit: 5,
      offset: 0,
    });
  });

  it("media.upload sends a Blob or a FormData; the same bytes give the same item", async () => {
    const item = await client.media.upload(new Blob([PNG], { type: "image/gif" }), { filename: "pixel.gif" });
    expect(item).toEqual({
      id: expect.stringMatching(ULID),
      url: `/media/${item.id}.webp`,
      width: 1,
      height: 1,
      mime: "image/png",
      bytes: PNG.byteLength,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const form = new FormData();
    form.append("file", new File([PNG], "again.png"));
    expect(await client.media.upload(form)).toEqual(item);
    expect((await fetch(`${front.url}/cms${item.url}`)).headers.get("content-type")).toBe("image/webp");
  });

  it("cache.purge answers the slug it purged", async () => {
    expect(await client.cache.purge("searchable")).toEqual({ purged: true, slug: "searchable" });
  });

  it("health reports the service", async () => {
    expect(await client.health()).toEqual({
      status: "ok",
      version: expect.any(String),
      uptime_seconds: expect.any(Number),
    });
  });

  it("csrf.token() keeps one token; csrf.refresh() asks the service again, and writes send what it answered", async () => {
    const kept = await client.csrf.token();
    recorder.requests.length = 0;
    expect(await client.csrf.token()).toBe(kept);
    expect(recorder.requests).toHaveLength(0);
    const fresh = await client.csrf.refresh();
    expect(recorder.paths()).toEqual(["GET /cms/api/v1/csrf"]);
    recorder.requests.length = 0;
    await client.cache.purge("searchable");
    expect(recorder.requests).toHaveLength(1);
    expect(recorder.requests[0]!.headers.get("x-csrf-token")).toBe(fresh);
    expect(recorder.requests[0]!.headers.get("cookie")).toBe(`svc_csrf=${fresh}`);
    expect(recorder.requests[0]!.headers.get("authorization")).toBe(`Bearer ${API_KEY}`);
  });

  it("reads carry neither the key nor the token", async () => {
    recorder.requests.length = 0;
    await client.articles.get("searchable");
    await client.search({ q: "marmalade" });
    for (const { headers } of recorder.requests) {
      expect([headers.get("authorization"), headers.get("cookie"), headers.get("x-csrf-token")]).toEqual([
        null,
        null,
        null,
      ]);
    }
  });

  it("a path segment cannot climb out of its route", async () => {
    await expect(client.articles.get("..")).rejects.toThrow(TypeError);
    await expect(client.articles.get("a/b")).rejects.toMatchObject({ status: 400, code: "invalid_slug" });
  });
});

import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { VellumError } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { articles } from "@vellum/plugin-articles";
import { cache } from "@vellum/plugin-cache";
import { health } from "@vellum/plugin-health";
import { search } from "@vellum/plugin-search";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  ARTICLES,
  bootCache,
  CACHE_CONTROL,
  type CacheHarness,
  cachingHeaders,
  type Client,
  createArticle,
  fetchClient,
  httpClient,
  metric,
  outcome,
  PURGE,
  variant,
  waitFor,
} from "./cache-support.js";
import { commandIO } from "./support.js";

/** The cacheable reads, with the one tag each response carries (contract §6). */
interface CachedRoute {
  name: string;
  tag: string;
  path(): string;
}

const cursors = { list: "", tag: "" };

const ROUTES: CachedRoute[] = [
  { name: "article page", tag: "article:hello", path: () => `${ARTICLES}/hello` },
  { name: "list", tag: "articles", path: () => ARTICLES },
  { name: "tag page", tag: "tag:a%20b", path: () => `${ARTICLES}?tag=a%20b` },
  { name: "tag page (non-ASCII tag)", tag: "tag:caf%C3%A9", path: () => `${ARTICLES}?tag=caf%C3%A9` },
  { name: "cursor page", tag: "articles", path: () => `${ARTICLES}?limit=1&cursor=${cursors.list}` },
  { name: "tag cursor page", tag: "tag:news", path: () => `${ARTICLES}?tag=news&limit=1&cursor=${cursors.tag}` },
];

const STRONG_ETAG = /^"[A-Za-z0-9_-]{22}"$/;

/** Three articles (so the list pages), tags with a space and a non-ASCII letter, and the search plugin beside. */
async function bootReads(): Promise<CacheHarness> {
  const h = await bootCache({ plugins: [search()] });
  await createArticle(h.t, "hello", ["news", "a b"]);
  await createArticle(h.t, "second", ["news", "café"]);
  await createArticle(h.t, "third", ["news", "it's"]);
  // The cursors, read through keys no test uses.
  const next = async (path: string) => {
    const res = await h.t.fetch(variant(path, "cursor"));
    const cursor = ((await res.json()) as { next_cursor: string | null }).next_cursor;
    expect(cursor).toEqual(expect.any(String));
    return encodeURIComponent(cursor as string);
  };
  cursors.list = await next(`${ARTICLES}?limit=1`);
  cursors.tag = await next(`${ARTICLES}?tag=news&limit=1`);
  return h;
}

/** The same checks over `vellum.fetch` and over a real socket, where hits are answered by the Node shortcut. */
describe.each(["vellum.fetch", "real HTTP"])("cacheable reads over %s", (mode) => {
  let h: CacheHarness;
  let t: TestVellum;
  let client: Client & { close?(): Promise<void> };

  beforeAll(async () => {
    h = await bootReads();
    t = h.t;
    client = mode === "vellum.fetch" ? fetchClient(t) : await httpClient(t);
  });
  afterAll(async () => {
    await client?.close?.();
    await h?.close();
  });

  const get = (path: string, headers: Record<string, string> = {}) => client.get(path, { headers });

  // ETag / Cache-Control / Cache-Tag / Surrogate-Key on every cached route, the same on a miss, a hit and a 304,
  // and If-None-Match answered 304 (empty body) whether the response is held or not.
  describe("ETag and 304 round trip", () => {
    it.each(ROUTES)("$name", async (route) => {
      const path = route.path();
      const probe = variant(path, "probe");

      let first!: Answer;
      expect(await outcome(t, async () => (first = await get(probe)))).toBe("miss");
      expect(first.status).toBe(200);
      const etag = first.headers.get("etag") as string;
      expect(etag).toMatch(STRONG_ETAG);
      const expected = { etag, cacheControl: CACHE_CONTROL, cacheTag: route.tag, surrogateKey: route.tag };
      expect(cachingHeaders(first)).toEqual(expected);
      expect(first.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(first.headers.get("content-length")).toBe(String(Buffer.byteLength(first.body)));
      expect(JSON.parse(first.body)).toBeTypeOf("object");

      let second!: Answer;
      expect(await outcome(t, async () => (second = await get(probe)))).toBe("hit");
      expect(second.status).toBe(200);
      expect(cachingHeaders(second)).toEqual(expected);
      expect(second.body).toBe(first.body);
      expect(second.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(second.headers.get("content-length")).toBe(String(Buffer.byteLength(first.body)));
      // The kernel's per-request headers are the request's own, not replayed from the miss.
      expect(second.headers.get("x-content-type-options")).toBe("nosniff");
      expect(second.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9._-]+$/);
      expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));

      // 304 on a miss: the route's own key is not held yet (the probe was another key, same bytes).
      let cold!: Answer;
      expect(await outcome(t, async () => (cold = await get(path, { "if-none-match": etag })))).toBe("miss");
      expect(cold.status).toBe(304);
      expect(cold.body).toBe("");
      expect(cachingHeaders(cold)).toEqual(expected);
      expect(cold.headers.get("x-content-type-options")).toBe("nosniff");

      // 304 on a hit, then the 200 from the same entry.
      let warm!: Answer;
      expect(await outcome(t, async () => (warm = await get(path, { "if-none-match": etag })))).toBe("hit");
      expect(warm.status).toBe(304);
      expect(warm.body).toBe("");
      expect(cachingHeaders(warm)).toEqual(expected);
      const full = await get(path);
      expect(full.status).toBe(200);
      expect(full.body).toBe(first.body);
      expect(cachingHeaders(full)).toEqual(expected);

      // Other If-None-Match forms: a non-matching one gets the 200; `*`, the weak form and a list match.
      let other!: Answer;
      expect(await outcome(t, async () => (other = await get(path, { "if-none-match": '"not-this-one"' })))).toBe(
        "hit",
      );
      expect(other.status).toBe(200);
      expect(other.body).toBe(first.body);
      expect(cachingHeaders(other)).toEqual(expected);
      for (const header of ["*", `W/${etag}`, `"stale", ${etag}`, `W/"stale", W/${etag}`]) {
        let answer!: Answer;
        expect(await outcome(t, async () => (answer = await get(path, { "if-none-match": header })))).toBe("hit");
        expect(answer.status, header).toBe(304);
        expect(answer.body).toBe("");
        expect(cachingHeaders(answer)).toEqual(expected);
      }
      // The same forms on a miss.
      for (const [i, header] of ["*", `W/${etag}`, `"stale", ${etag}`].entries()) {
        let answer!: Answer;
        const key = variant(path, `inm-${i}`);
        expect(await outcome(t, async () => (answer = await get(key, { "if-none-match": header })))).toBe("miss");
        expect(answer.status, header).toBe(304);
        expect(cachingHeaders(answer)).toEqual(expected);
      }

      // HEAD: the headers of the GET without its body, held (a hit) or not (answered by the route, not kept).
      for (const [key, expectedOutcome] of [
        [path, "hit"],
        [variant(path, "head-cold"), "none"],
      ] as const) {
        let head!: Answer;
        expect(await outcome(t, async () => (head = await client.get(key, { method: "HEAD" })))).toBe(expectedOutcome);
        expect(head.status).toBe(200);
        expect(head.body).toBe("");
        expect(cachingHeaders(head)).toEqual(expected);
        expect(head.headers.get("content-type")).toBe("application/json; charset=utf-8");
        expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(first.body)));
      }
    });
  });

  // Clients such as curl send some characters unencoded (`'`, `"`), which URL parsing then escapes: the response
  // must be held under what the client sends, or the shortcut never finds it and every such read is a miss.
  it.each(["?tag=it's", '?tag="quoted"'])("a query sent unencoded (%s) is a hit the second time", async (query) => {
    const path = `${ARTICLES}${query}`;
    const first = await get(path);
    expect(first.status).toBe(200);
    expect(await outcome(t, () => get(path))).toBe("hit");
    expect(await h.queriesDuring(() => get(path))).toEqual([]);
  });

  // Search answers depend on the index and must not be kept by anyone: no-store, no validators, no tags, and the
  // local cache never answers them.
  it("search is no-store, without ETag or tags, and never answered from the cache", async () => {
    const requests: Array<Record<string, string>> = [{}, {}, { "if-none-match": "*" }];
    for (const headers of requests) {
      let answer!: Answer;
      const queries = await h.queriesDuring(async () => {
        expect(await outcome(t, async () => (answer = await get("/api/v1/search?q=hello", headers)))).toBe("none");
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("cache-control")).toBe("no-store");
      expect(cachingHeaders(answer)).toEqual({
        etag: null,
        cacheControl: "no-store",
        cacheTag: null,
        surrogateKey: null,
      });
      expect(JSON.parse(answer.body)).toHaveProperty("results");
      expect(queries.length).toBeGreaterThan(0);
    }
  });

  // What makes the cache worth having: a hit is answered from memory, before routing, without touching SQLite.
  describe("a hit runs no database query", () => {
    it.each([
      ["article page", `${ARTICLES}/third`, "articles_items"],
      ["list page", `${ARTICLES}?limit=2`, "articles_feed"],
    ])("%s", async (_name, path, table) => {
      const miss = await h.queriesDuring(() => get(path));
      expect(miss.length).toBeGreaterThanOrEqual(1);
      expect(miss.join("\n")).toContain(table);
      let etag = "";
      expect(await h.queriesDuring(async () => (etag = (await get(path)).headers.get("etag") ?? ""))).toEqual([]);
      expect(await h.queriesDuring(() => get(path, { "if-none-match": etag }))).toEqual([]);
      expect(await h.queriesDuring(() => client.get(path, { method: "HEAD" }))).toEqual([]);
    });
  });

  // Contract §4: cacheable public reads never carry Set-Cookie (CDNs refuse to store such responses, and a shared
  // copy must not hand one visitor's token to another), whatever cookie the request brings.
  describe("no Set-Cookie on cacheable responses", () => {
    it.each(ROUTES)("$name", async (route) => {
      const valid = (await t.writeHeaders()).cookie as string;
      const cookies: Array<[string, Record<string, string>]> = [
        ["no-cookie", {}],
        ["valid-csrf", { cookie: valid }],
        ["bogus-csrf", { cookie: "svc_csrf=forged.value; other=1" }],
      ];
      for (const [name, cookie] of cookies) {
        const key = variant(route.path(), `cookie-${name}`);
        const answers: Array<[string, Answer]> = [];
        let etag = "";
        expect(
          await outcome(t, async () => {
            const miss = await get(key, cookie);
            etag = miss.headers.get("etag") ?? "";
            answers.push(["miss", miss]);
          }),
        ).toBe("miss");
        answers.push(["hit", await get(key, cookie)]);
        answers.push(["304", await get(key, { ...cookie, "if-none-match": etag })]);
        answers.push(["HEAD", await client.get(key, { method: "HEAD", headers: cookie })]);
        answers.push(["304 on a miss", await get(variant(key, "cold"), { ...cookie, "if-none-match": etag })]);
        answers.push(["HEAD on a miss", await client.get(variant(key, "head"), { method: "HEAD", headers: cookie })]);
        for (const [kind, answer] of answers) {
          expect(answer.status, `${name} ${kind}`).toBe(kind.startsWith("304") ? 304 : 200);
          expect(answer.headers.get("set-cookie"), `${name} ${kind}`).toBeNull();
          expect(answer.headers.get("etag"), `${name} ${kind}`).toBe(etag);
        }
      }
    });
  });
});

/** `{"error":{code,message,request_id,docs}}` (contract §3), with the request id of the response. */
async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: Record<string, unknown> };
  expect(body.error).toMatchObject({ code, message: expect.any(String), docs: `/docs/api/errors#${code}` });
  expect(body.error.request_id).toBe(res.headers.get("x-request-id"));
  return body.error;
}

let addresses = 0;
/** A client address of its own (the purge route allows 5 a minute per address). */
const freshAddress = () => `10.1.${(++addresses >> 8) & 255}.${addresses & 255}`;

/** `POST /api/v1/cache/purge {"slug"}` with the key and CSRF, from a fresh address (the route allows 5 a minute per address). */
const purgeSlug = async (t: TestVellum, slug: string) =>
  t.fetch(PURGE, { method: "POST", json: { slug }, headers: await t.writeHeaders(), clientAddress: freshAddress() });

// POST /api/v1/cache/purge: key, then CSRF, then the body; 5 a minute per client address; a purge makes every
// response showing the article (its page, the list, its tags' pages) a miss again, and nothing else.
describe("POST /api/v1/cache/purge", () => {
  let h: CacheHarness;
  let t: TestVellum;
  const purge = async (init: Parameters<TestVellum["fetch"]>[1] = {}) =>
    t.fetch(PURGE, { method: "POST", clientAddress: freshAddress(), ...init });

  beforeAll(async () => {
    h = await bootCache();
    t = h.t;
    await createArticle(t, "hello", ["news"]);
    await createArticle(t, "other", ["solo"]);
  });
  afterAll(() => h?.close());

  it("401 without the key", async () => {
    const res = await purge({ json: { slug: "hello" } });
    await expectError(res, 401, "unauthorized");
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("403 with the key but without a matching CSRF token", async () => {
    const headers = await t.writeHeaders();
    await expectError(
      await purge({ json: { slug: "hello" }, headers: { authorization: headers.authorization as string } }),
      403,
      "csrf_failed",
    );
    const wrong = { ...headers, "x-csrf-token": "not-the-cookie" };
    await expectError(await purge({ json: { slug: "hello" }, headers: wrong }), 403, "csrf_failed");
  });

  it("400 invalid_slug for a bad slug, 400 validation_failed without one, 415 for a non-JSON body", async () => {
    const headers = await t.writeHeaders();
    for (const slug of ["Not A Slug", "a/b", "", 42, null, "x".repeat(201)]) {
      await expectError(await purge({ json: { slug }, headers }), 400, "invalid_slug");
    }
    const missing = await expectError(await purge({ json: { other: "hello" }, headers }), 400, "validation_failed");
    expect(missing.details).toEqual([{ field: "slug", message: expect.any(String) }]);
    const form = { ...headers, "content-type": "application/x-www-form-urlencoded" };
    await expectError(await purge({ body: "slug=hello", headers: form }), 415, "unsupported_media_type");
    const plain = { ...headers, "content-type": "text/plain" };
    await expectError(await purge({ body: '{"slug":"hello"}', headers: plain }), 415, "unsupported_media_type");
    await expectError(
      await purge({ body: "{not json", headers: { ...headers, "content-type": "application/json" } }),
      400,
      "invalid_json",
    );
  });

  it("200 purges the article's page, the list and its tags' pages, and nothing else", async () => {
    const purged = [`${ARTICLES}/hello`, ARTICLES, `${ARTICLES}?tag=news`];
    const kept = [`${ARTICLES}/other`, `${ARTICLES}?tag=solo`];
    for (const path of [...purged, ...kept]) {
      await t.fetch(path);
      expect(await outcome(t, () => t.fetch(path)), path).toBe("hit");
    }
    const purgesBefore = await metric(t, "service_cache_purges_total", { reason: "api" });
    const entriesBefore = await metric(t, "service_cache_purged_entries_total", { reason: "api" });

    const res = await purge({ json: { slug: "hello" }, headers: await t.writeHeaders() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ purged: true, slug: "hello" });
    expect(res.headers.get("set-cookie")).toBeNull();

    expect(await metric(t, "service_cache_purges_total", { reason: "api" })).toBe(purgesBefore + 1);
    expect(await metric(t, "service_cache_purged_entries_total", { reason: "api" })).toBe(entriesBefore + 3);
    for (const path of purged) {
      const queries = await h.queriesDuring(async () =>
        expect(await outcome(t, () => t.fetch(path)), path).toBe("miss"),
      );
      expect(queries.length, path).toBeGreaterThan(0);
      expect(await outcome(t, () => t.fetch(path)), path).toBe("hit");
    }
    for (const path of kept) expect(await outcome(t, () => t.fetch(path)), path).toBe("hit");
  });

  it("a slug without an article purges nothing that is held (only its page could be)", async () => {
    const held = [ARTICLES, `${ARTICLES}/hello`, `${ARTICLES}?tag=news`];
    for (const path of held) await t.fetch(path);
    const entriesBefore = await metric(t, "service_cache_purged_entries_total", { reason: "api" });
    const res = await purge({ json: { slug: "ghost" }, headers: await t.writeHeaders() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ purged: true, slug: "ghost" });
    expect(await metric(t, "service_cache_purged_entries_total", { reason: "api" })).toBe(entriesBefore);
    for (const path of held) expect(await outcome(t, () => t.fetch(path)), path).toBe("hit");
  });

  it("the 6th purge within a minute from one address is 429 with Retry-After; other addresses are not limited", async () => {
    const headers = await t.writeHeaders();
    const address = freshAddress();
    for (let i = 1; i <= 5; i++) {
      const res = await t.fetch(PURGE, { method: "POST", json: { slug: "hello" }, headers, clientAddress: address });
      expect(res.status, `purge ${i}`).toBe(200);
      expect(res.headers.get("ratelimit-limit")).toBe("5");
      expect(res.headers.get("ratelimit-remaining")).toBe(String(5 - i));
    }
    await t.fetch(`${ARTICLES}/hello`);
    const limited = await t.fetch(PURGE, { method: "POST", json: { slug: "hello" }, headers, clientAddress: address });
    await expectError(limited, 429, "rate_limited");
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    // The refused purge purged nothing.
    expect(await outcome(t, () => t.fetch(`${ARTICLES}/hello`))).toBe("hit");

    const elsewhere = await purge({ json: { slug: "hello" }, headers });
    expect(elsewhere.status).toBe(200);
  });

  it("requests without the key or the CSRF token do not spend the key holder's budget", async () => {
    const headers = await t.writeHeaders();
    const address = freshAddress();
    const post = (init: Parameters<TestVellum["fetch"]>[1]) =>
      t.fetch(PURGE, { method: "POST", json: { slug: "hello" }, clientAddress: address, ...init });
    for (let i = 0; i < 8; i++) {
      expect((await post({})).status).toBe(401);
      expect((await post({ headers: { authorization: headers.authorization as string } })).status).toBe(403);
    }
    const res = await post({ headers });
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-remaining")).toBe("4");
  });
});

/** Forces a full collection (the flag is set at run time, so the suite needs no --expose-gc). */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

/**
 * Distinct URLs in the flood. Each is a miss that runs the handler and keeps its response: about 150 µs in-process
 * on a 2-CPU box, so about 15 s in all.
 */
const FLOOD = 100_000;

// A flood of distinct URLs (a cache-busting crawler, or an attacker) must not grow the process: the local cache
// stays within its entry and byte bounds, every response it drops is counted as an eviction, and it keeps serving.
describe("bounds under a flood of distinct URLs", () => {
  const flood = async (t: TestVellum, count: number, path: (i: number) => string) => {
    const options = { clientAddress: "127.0.0.1" };
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const res = await t.vellum.fetch(new Request(`http://vellum.test${path(next++)}`), options);
        if (res.status !== 200) throw new Error(`${path(next - 1)} answered ${res.status}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
  };

  it("100,000 list URLs: at most 500 entries and 256 KB, evictions counted, memory flat, reads still served", async () => {
    const maxBytes = 256 * 1024;
    const h = await bootCache({
      cache: { maxEntries: 500, maxBytes, maxEntryBytes: 64 * 1024 },
      plugins: [health()],
      config: { accessLog: false },
    });
    const { t } = h;
    try {
      await createArticle(t, "hello", ["news"]);
      collectGarbage();
      const heapBefore = process.memoryUsage().heapUsed;
      const rssBefore = process.memoryUsage().rss;

      await flood(t, FLOOD, (i) => `${ARTICLES}?limit=1&n=${i}`);

      const state = (await (await t.fetch("/health/cache")).json()) as Record<string, number>;
      expect(state).toMatchObject({ status: "ok", local: true, max_entries: 500, max_bytes: maxBytes });
      expect(state.entries).toBeGreaterThan(0);
      expect(state.entries).toBeLessThanOrEqual(500);
      expect(state.bytes).toBeLessThanOrEqual(maxBytes);
      expect(await metric(t, "service_cache_entries")).toBe(state.entries);
      expect(await metric(t, "service_cache_bytes")).toBe(state.bytes);
      // Every miss was kept, so each response is either still held or was evicted: no drop goes uncounted.
      expect(await metric(t, "service_cache_misses_total", { reason: "absent" })).toBe(FLOOD);
      expect(await metric(t, "service_cache_evictions_total")).toBe(FLOOD - (state.entries as number));
      expect(await metric(t, "service_cache_evictions_total", { reason: "bytes" })).toBeGreaterThan(0);

      collectGarbage();
      // Measured: about 2 MB of heap and 70 MB of RSS (the allocator keeps what the flood's garbage used).
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(16 * 1024 * 1024);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);

      await createArticle(t, "fresh", ["news"]);
      expect(await outcome(t, () => t.fetch(`${ARTICLES}/fresh`))).toBe("miss");
      const read = await t.fetch(`${ARTICLES}/fresh`);
      expect(read.status).toBe(200);
      expect(((await read.json()) as { slug: string }).slug).toBe("fresh");
      const list = (await (await t.fetch(`${ARTICLES}?limit=1&n=0`)).json()) as { articles: Array<{ slug: string }> };
      expect(list.articles.map((a) => a.slug)).toEqual(["fresh"]);
    } finally {
      await h.close();
    }
  }, 90_000);

  it("the entry bound holds exactly when it is the one reached", async () => {
    const h = await bootCache({ cache: { maxEntries: 100 }, config: { accessLog: false } });
    const { t } = h;
    try {
      await createArticle(t, "hello", ["news"]);
      await flood(t, 5_000, (i) => `${ARTICLES}/hello?n=${i}`);
      expect(await metric(t, "service_cache_entries")).toBe(100);
      expect(await metric(t, "service_cache_evictions_total", { reason: "entries" })).toBe(4_900);
      expect(await metric(t, "service_cache_evictions_total", { reason: "bytes" })).toBe(0);
      expect(await outcome(t, () => t.fetch(`${ARTICLES}/hello?n=4999`))).toBe("hit");
      expect(await outcome(t, () => t.fetch(`${ARTICLES}/hello?n=0`))).toBe("miss");
    } finally {
      await h.close();
    }
  }, 60_000);
});

describe("the local cache off (maxEntries 0)", () => {
  it("keeps and looks up nothing, and every read still carries its validators and answers 304s", async () => {
    const h = await bootCache({ cache: { maxEntries: 0 }, plugins: [health()] });
    const client = await httpClient(h.t);
    try {
      await createArticle(h.t, "hello", ["news"]);
      const first = await client.get(`${ARTICLES}/hello`);
      expect(first.status).toBe(200);
      expect(cachingHeaders(first)).toEqual({
        etag: expect.stringMatching(STRONG_ETAG),
        cacheControl: CACHE_CONTROL,
        cacheTag: "article:hello",
        surrogateKey: "article:hello",
      });
      // Each read runs the handler's query: nothing answers before routing.
      const conditional: Record<string, string> = { "if-none-match": first.headers.get("etag") as string };
      for (const headers of [{}, conditional]) {
        const queries = await h.queriesDuring(async () => {
          const again = await client.get(`${ARTICLES}/hello`, { headers });
          expect(again.status).toBe("if-none-match" in headers ? 304 : 200);
          expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
        });
        expect(queries.some((sql) => sql.includes("articles_items"))).toBe(true);
      }
      expect(await metric(h.t, "service_cache_hits_total")).toBe(0);
      expect(await metric(h.t, "service_cache_misses_total", { reason: "off" })).toBe(3);
      expect(await (await h.t.fetch("/health/cache")).json()).toMatchObject({ local: false });
    } finally {
      await client.close();
      await h.close();
    }
  });
});

const SECRET = "0123456789abcdef0123";

interface Delivery {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local CDN purge endpoint: records every request and answers `status`. */
async function purgeReceiver() {
  const deliveries: Delivery[] = [];
  const receiver = { deliveries, status: 200, url: "", server: undefined as Server | undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      deliveries.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      res.statusCode = receiver.status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.server = server;
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/purge`;
  return receiver;
}

/** What a plugin command gets from the CLI, printing into `printed`. */
function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Checks one delivery's signature: `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`, with a fresh timestamp. */
function expectSigned(delivery: Delivery): string[] {
  expect(delivery.method).toBe("POST");
  expect(delivery.url).toBe("/purge");
  expect(delivery.headers["content-type"]).toBe("application/json");
  expect(delivery.headers["x-service-event"]).toBe("cache.purge");
  const timestamp = delivery.headers["x-service-timestamp"] as string;
  expect(timestamp).toMatch(/^\d+$/);
  expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(300);
  const hmac = createHmac("sha256", SECRET).update(`${timestamp}.${delivery.body}`).digest("hex");
  expect(delivery.headers["x-service-signature"]).toBe(`sha256=${hmac}`);
  const wrong = createHmac("sha256", "another-secret-0123456").update(`${timestamp}.${delivery.body}`).digest("hex");
  expect(delivery.headers["x-service-signature"]).not.toBe(`sha256=${wrong}`);
  const parsed = JSON.parse(delivery.body) as { tags: string[] };
  expect(Object.keys(parsed)).toEqual(["tags"]);
  return parsed.tags;
}

// Purges forwarded to a CDN: a signed POST of the changed tags for each write and each purge, delivered at least
// once (a failing receiver makes the queue retry, then dead-letter), and reported on /health/cache.
describe("CDN purge forwarding", () => {
  let receiver: Awaited<ReturnType<typeof purgeReceiver>>;
  let h: CacheHarness;
  let t: TestVellum;

  beforeAll(async () => {
    receiver = await purgeReceiver();
    h = await bootCache({ cache: { cdnPurgeUrl: receiver.url, cdnPurgeSecret: SECRET }, plugins: [health()] });
    t = h.t;
  });
  afterAll(async () => {
    await h?.close();
    await closeServer(receiver?.server);
  });

  const deliveredTags = async (from: number, what: string) => {
    await waitFor(() => receiver.deliveries.length > from, what);
    return expectSigned(receiver.deliveries[from] as Delivery);
  };

  const cdnJobs = () =>
    t.vellum.db().selectFrom("_vellum_jobs").selectAll().where("queue", "=", "cache:cdn").orderBy("id").execute();

  it("a create and an update each send the signed tags they changed", async () => {
    let from = receiver.deliveries.length;
    await createArticle(t, "cdn-a", ["old"]);
    expect((await deliveredTags(from, "the create's purge")).sort()).toEqual(["article:cdn-a", "articles", "tag:old"]);

    from = receiver.deliveries.length;
    const res = await t.fetch(`${ARTICLES}/cdn-a`, {
      method: "PUT",
      json: { tags: ["new one"] },
      headers: await t.writeHeaders(),
    });
    expect(res.status).toBe(200);
    const tags = await deliveredTags(from, "the update's purge");
    expect(tags.sort()).toEqual(["article:cdn-a", "articles", "tag:new%20one", "tag:old"]);
  });

  it("the purge endpoint forwards the article's tags", async () => {
    const from = receiver.deliveries.length;
    const res = await purgeSlug(t, "cdn-a");
    expect(res.status).toBe(200);
    expect((await deliveredTags(from, "the API purge")).sort()).toEqual(["article:cdn-a", "articles", "tag:new%20one"]);
  });

  it("a receiver answering 500 makes the job retry with backoff; the retry delivers; /health/cache reports it", async () => {
    await waitFor(async () => (await cdnJobs()).every((job) => job.status === "applied"), "earlier purges delivered");
    receiver.status = 500;
    const from = receiver.deliveries.length;
    const res = await purgeSlug(t, "cdn-a");
    expect(res.status).toBe(200);
    await waitFor(async () => (await cdnJobs()).some((job) => job.attempts === 1), "a failed attempt");
    const failed = (await cdnJobs()).find((job) => job.status !== "applied");
    expect(failed).toMatchObject({ status: "queued", attempts: 1, type: "cdn-purge" });
    expect(failed?.last_error).toContain("500");
    expect(failed?.run_at).toBeGreaterThan(Date.now()); // backoff: 5 s ± 25 %
    expect(receiver.deliveries.length).toBe(from + 1);

    const state = (await (await t.fetch("/health/cache")).json()) as Record<string, unknown>;
    expect(state).toMatchObject({ status: "ok", cdn_forwarding: true, cdn_purges_dead: 0 });
    expect(state.cdn_purges_queued).toBeGreaterThanOrEqual(1);

    // Let the backoff elapse (move the job's due time to now) with the receiver back up: the same delivery again.
    receiver.status = 200;
    await t.vellum.db().updateTable("_vellum_jobs").set({ run_at: Date.now() }).where("id", "=", failed?.id).execute();
    t.vellum.queue().notify("cache:cdn");
    await waitFor(async () => (await cdnJobs()).every((job) => job.status === "applied"), "the retry delivered");
    const [firstTry, retry] = receiver.deliveries.slice(from) as [Delivery, Delivery];
    expect(retry.headers["x-service-delivery"]).toBe(firstTry.headers["x-service-delivery"]);
    expect(retry.headers["x-service-delivery"]).toBe(failed?.id);
    expect(expectSigned(retry)).toEqual(expectSigned(firstTry));
    const after = (await (await t.fetch("/health/cache")).json()) as Record<string, unknown>;
    expect(after).toMatchObject({ status: "ok", cdn_forwarding: true, cdn_purges_queued: 0, cdn_purges_dead: 0 });
  });

  it("after its last attempt a purge is dead-lettered and /health/cache is degraded", async () => {
    const down = await purgeReceiver();
    down.status = 500;
    const d = await bootCache({
      cache: { cdnPurgeUrl: down.url, cdnPurgeSecret: SECRET, cdnMaxAttempts: 1 },
      plugins: [health()],
    });
    try {
      await createArticle(d.t, "doomed");
      await waitFor(async () => {
        const state = (await (await d.t.fetch("/health/cache")).json()) as Record<string, unknown>;
        return state.cdn_purges_dead === 1;
      }, "a dead-lettered purge");
      const res = await d.t.fetch("/health/cache");
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        status: "degraded",
        state: "degraded",
        cdn_forwarding: true,
        cdn_purges_dead: 1,
      });
      expect(down.deliveries.length).toBe(1);

      // The relay works again: `vellum cache replay` requeues the dead purge and the worker sends it.
      down.status = 200;
      const printed: string[] = [];
      expect(await d.t.vellum.runCommand("cache replay", commandIO(printed))).toBe(0);
      expect(printed).toEqual(["cache replay: 1 dead CDN purge(s) queued again"]);
      await waitFor(async () => down.deliveries.length === 2, "the replayed purge");
      await waitFor(async () => {
        const state = (await (await d.t.fetch("/health/cache")).json()) as Record<string, unknown>;
        return state.status === "ok" && state.cdn_purges_dead === 0;
      }, "/health/cache ok again");
    } finally {
      await d.close();
      await closeServer(down.server);
    }
  });

  it("`vellum cache replay` without forwarding says there is nothing to replay", async () => {
    const plain = await createTestVellum({ plugins: [articles(), cache()] });
    try {
      const printed: string[] = [];
      expect(await plain.vellum.runCommand("cache replay", commandIO(printed))).toBe(1);
      expect(printed[0]).toContain("CDN forwarding is off");
    } finally {
      await plain.close();
    }
  });

  it("without forwarding, /health/cache says so", async () => {
    const plain = await createTestVellum({ plugins: [articles(), cache(), health()] });
    try {
      expect(await (await plain.fetch("/health/cache")).json()).toMatchObject({ status: "ok", cdn_forwarding: false });
    } finally {
      await plain.close();
    }
  });
});

// The forwarding settings are checked before anything starts: a URL needs its secret, and credentials belong in the
// signature, not in the URL (where logs and `vellum config` would show them).
describe("CDN settings validation", () => {
  it.each([
    [{ cdnPurgeUrl: "http://127.0.0.1:9/purge" }, "SERVICE_CACHE_PURGE_SECRET"],
    [{ cdnPurgeUrl: "http://user:hunter2-password@127.0.0.1:9/purge", cdnPurgeSecret: SECRET }, "CACHE_CDN_PURGE_URL"],
    [{ cdnPurgeUrl: "ftp://127.0.0.1/purge", cdnPurgeSecret: SECRET }, "CACHE_CDN_PURGE_URL"],
    [{ cdnPurgeUrl: "http://127.0.0.1:9/purge", cdnPurgeSecret: "too-short" }, "SERVICE_CACHE_PURGE_SECRET"],
  ])("refuses %j with VELLUM_CONFIG_INVALID naming %s", async (options, named) => {
    const error = await createTestVellum({ plugins: [articles(), cache(options)] }).then(
      async (t) => {
        await t.close();
        throw new Error("the instance started");
      },
      (caught: unknown) => caught,
    );
    expect(VellumError.is(error)).toBe(true);
    expect(error).toMatchObject({ code: "VELLUM_CONFIG_INVALID" });
    expect((error as Error).message).toContain(named);
    expect((error as Error).message).not.toContain("hunter2");
    expect((error as Error).message).not.toContain(SECRET);
  });
});

import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError, definePlugin, Reply, rawJson } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { probePlugin } from "./fixtures/probe-plugin.js";

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Responses the tiny cache stored: one per handler run it saw. */
let stores = 0;

/** A tiny response cache with ETags, written only against the hooks (what the cache plugin will do). */
const tinyCache = definePlugin({
  name: "tiny_cache",
  setup(ctx) {
    const stored = new Map<string, { etag: string; body: string }>();
    ctx.hooks.hook("http:request", (c) => {
      if (c.event.req.method !== "GET") return;
      const hit = stored.get(c.event.url.pathname + c.event.url.search);
      if (!hit) return;
      const status = c.event.req.headers.get("if-none-match") === hit.etag ? 304 : 200;
      c.response = new Response(status === 304 ? null : hit.body, {
        status,
        headers: { etag: hit.etag, "x-cache": "hit", "content-type": "application/json" },
      });
    });
    ctx.hooks.hook("http:response", async (c) => {
      if (c.event.req.method !== "GET" || c.response.status !== 200) return;
      stores++;
      const body = await c.response.text();
      const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 16)}"`;
      stored.set(c.event.url.pathname + c.event.url.search, { etag, body });
      c.response = new Response(body, { status: 200, headers: { ...Object.fromEntries(c.response.headers), etag } });
    });
  },
});

describe("http:request and http:response hooks", () => {
  it("let a plugin add ETags, serve hits without the handler and answer 304", async () => {
    t = await createTestVellum({ plugins: [probePlugin(), tinyCache()] });
    const first = await t.fetch("/api/v1/page?limit=7");
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[\w-]{16}"$/);
    expect(first.headers.get("x-request-id")).toBeTruthy();
    expect(await first.json()).toEqual({ limit: 7 });

    const hit = await t.fetch("/api/v1/page?limit=7");
    expect(hit.headers.get("x-cache")).toBe("hit");
    expect(await hit.json()).toEqual({ limit: 7 });
    expect(hit.headers.get("x-content-type-options")).toBe("nosniff");

    const notModified = await t.fetch("/api/v1/page?limit=7", { headers: { "if-none-match": etag ?? "" } });
    expect(notModified.status).toBe(304);
    expect(stores).toBe(1);
  });

  it("add the kernel's headers once when a subscriber passes the response through", async () => {
    const watcher = definePlugin({
      name: "watcher",
      setup(ctx) {
        ctx.hooks.hook("http:response", () => undefined);
      },
    });
    t = await createTestVellum({ plugins: [probePlugin(), watcher()] });
    const res = await t.fetch("/api/v1/csrf");
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie()).toHaveLength(1);
    expect(res.headers.get("x-request-id")).toMatch(/^[\w-]+$/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await res.json()).toEqual({ token: expect.any(String) });
    const read = await t.fetch("/api/v1/page?limit=3");
    expect(read.headers.getSetCookie()).toEqual([]);
    expect(await read.json()).toEqual({ limit: 3 });
  });

  it("keep the handler's status and headers when converting its result", async () => {
    const created = definePlugin({
      name: "created",
      setup(ctx) {
        ctx.router.get("/made", (event) => {
          event.res.status = 201;
          event.res.headers.set("location", "/made/1");
          return { id: 1 };
        });
        ctx.hooks.hook("http:response", (c) => {
          c.response.headers.set("x-seen", String(c.response.status));
        });
      },
    });
    t = await createTestVellum({ plugins: [created()] });
    const res = await t.fetch("/made");
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe("/made/1");
    expect(res.headers.get("x-seen")).toBe("201");
    expect(await res.json()).toEqual({ id: 1 });
  });

  it("http:reply rewrites a Reply or a JSON value before it becomes the response, never a Response", async () => {
    const seen: Array<[string, number, string | null]> = [];
    const stamper = definePlugin({
      name: "stamper",
      setup(ctx) {
        ctx.router.get("/raw", () => rawJson('{"raw":true}', { headers: { "x-own": "kept" } }));
        ctx.router.get("/native", () => new Response("native", { headers: { "content-type": "text/plain" } }));
        ctx.router.get("/fails", () => {
          throw new ApiError("not_found", "Nothing here.");
        });
        ctx.hooks.hook(
          "http:reply",
          ({ event, reply }) => void seen.push([event.url.pathname, reply.status, reply.body]),
        );
        ctx.hooks.hook("http:reply", (c) => {
          const etag = `"${c.reply.body?.length ?? 0}"`;
          const notModified = c.event.req.headers.get("if-none-match") === etag;
          c.reply = new Reply(notModified ? null : c.reply.body, notModified ? 304 : c.reply.status, {
            ...c.reply.headers,
            etag,
          });
        });
      },
    });
    t = await createTestVellum({ plugins: [probePlugin(), stamper()] });
    const json = await t.fetch("/api/v1/page?limit=4");
    expect(json.status).toBe(200);
    expect(json.headers.get("etag")).toBe('"11"');
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(json.headers.get("x-request-id")).toBeTruthy();
    expect(await json.json()).toEqual({ limit: 4 });

    const raw = await t.fetch("/raw");
    expect([raw.headers.get("etag"), raw.headers.get("x-own")]).toEqual(['"12"', "kept"]);
    const notModified = await t.fetch("/raw", { headers: { "if-none-match": '"12"' } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("x-frame-options")).toBe("DENY");
    expect(await notModified.text()).toBe("");

    const native = await t.fetch("/native");
    expect([native.status, native.headers.get("etag"), await native.text()]).toEqual([200, null, "native"]);
    expect((await t.fetch("/fails")).status).toBe(404);
    expect(seen).toEqual([
      ["/api/v1/page", 200, '{"limit":4}'],
      ["/raw", 200, '{"raw":true}'],
      ["/raw", 200, '{"raw":true}'],
    ]);
  });

  it("run after the kernel's gates: a limited or unauthorised request never reaches them", async () => {
    const seen: string[] = [];
    const spy = definePlugin({
      name: "spy",
      setup: (ctx) => void ctx.hooks.hook("http:request", (c) => void seen.push(c.event.url.pathname)),
    });
    t = await createTestVellum({ plugins: [probePlugin(), spy()] });
    expect((await t.fetch("/api/v1/echo", { method: "POST", json: {} })).status).toBe(401);
    expect((await t.fetch("/nope")).status).toBe(404);
    expect(seen).toEqual([]);
  });
});

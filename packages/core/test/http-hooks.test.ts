import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { definePlugin } from "../src/index.js";
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

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { definePlugin, json, publicPath } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";

// Links the service makes carry the prefix it is mounted under: the one a Node host stripped
// (Connect's `originalUrl`, Express's `baseUrl`), else the path of `baseUrl`.

const linker = definePlugin({
  name: "linker",
  setup(ctx) {
    ctx.router.get("/where", (event) => json({ self: publicPath(event, "/where") }), { csrfCookie: true });
  },
});

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it("without a prefix, links are from the root", async () => {
  t = await createTestVellum({ plugins: [linker()] });
  const res = await t.fetch("/where");
  expect(await res.json()).toEqual({ self: "/where" });
  expect(res.headers.get("set-cookie")).toMatch(/; Path=\/;/);
  const missing = (await (await t.fetch("/nowhere")).json()) as { error: { docs: string } };
  expect(missing.error.docs).toBe("/docs/api/errors#not_found");
});

it("takes the prefix from the path of baseUrl when the host hands over a rewritten request", async () => {
  t = await createTestVellum({ plugins: [linker()], config: { baseUrl: "https://example.org/site/cms/" } });
  const res = await t.fetch("/where");
  expect(await res.json()).toEqual({ self: "/site/cms/where" });
  expect(res.headers.get("set-cookie")).toMatch(/; Path=\/site\/cms;/);
  const missing = (await (await t.fetch("/nowhere")).json()) as { error: { docs: string } };
  expect(missing.error.docs).toBe("/site/cms/docs/api/errors#not_found");
});

it("takes the prefix a Connect-style router stripped, from originalUrl", async () => {
  t = await createTestVellum({ plugins: [linker()] });
  const handler = t.vellum.handler;
  const server = createServer((req, res) => {
    const original = req.url ?? "/";
    if (!original.startsWith("/mounted/")) return void res.writeHead(404).end();
    Object.assign(req, { originalUrl: original, url: original.slice("/mounted".length) });
    handler(req, res, () => res.writeHead(404).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const res = await fetch(`${base}/mounted/where?x=1`);
    expect(await res.json()).toEqual({ self: "/mounted/where" });
    expect(res.headers.get("set-cookie")).toMatch(/; Path=\/mounted;/);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

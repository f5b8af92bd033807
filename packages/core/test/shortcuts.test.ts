import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { definePlugin } from "../src/index.js";
import type { PreparedResponse } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";

let t: TestVellum | undefined;
let host: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (host ? host.close(r) : r(undefined)));
  host = undefined;
  await t?.close();
  t = undefined;
});

const BODY = new TextEncoder().encode('{"prepared":true}');
const PREPARED: PreparedResponse = {
  status: 200,
  headers: ["content-type", "application/json; charset=utf-8", "etag", '"abc"'],
  body: BODY,
  route: "/prepared",
};

/** A plugin whose shortcut answers `/prepared`, throws on `/broken`, and whose routes answer the rest. */
function shortcutPlugin(seen: string[]) {
  return definePlugin({
    name: "shortcut-probe",
    setup(ctx) {
      ctx.router.shortcut((request) => {
        seen.push(`${request.method} ${request.url} ${request.header("x-probe") ?? "-"}`);
        if (request.url === "/broken") throw new Error("shortcut failed");
        return request.url.startsWith("/prepared") ? PREPARED : undefined;
      });
      ctx.router.get("/routed", () => ({ routed: true }));
      ctx.router.get("/broken", () => ({ fellThrough: true }));
    },
  })();
}

async function boot(seen: string[], corsOrigins: string[] = []): Promise<string> {
  t = await createTestVellum({ plugins: [shortcutPlugin(seen)], config: { corsOrigins } });
  host = createServer(t.vellum.handler);
  await new Promise<void>((resolve) => host?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
}

/** A raw HTTP exchange, to see the exact status line, headers and body bytes. */
function raw(base: string, method: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("router.shortcut: prepared responses before routing", () => {
  it("answers over a real socket with the kernel's headers added, and records the request", async () => {
    const seen: string[] = [];
    const base = await boot(seen);
    // Header names in any case, as clients send them (the shortcut reads `rawHeaders`).
    const res = await raw(base, "GET", "/prepared", { "X-Probe": "1", "X-Request-Id": "req-42" });
    expect(res.status).toBe(200);
    expect(res.body).toBe('{"prepared":true}');
    expect(res.headers).toMatchObject({
      "content-type": "application/json; charset=utf-8",
      etag: '"abc"',
      "content-length": String(BODY.byteLength),
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "x-frame-options": "DENY",
      "x-request-id": "req-42",
    });
    expect(res.headers["set-cookie"]).toBeUndefined();
    expect(seen).toEqual(["GET /prepared 1"]);
    const metrics = await t?.vellum.metrics.registry.getSingleMetricAsString("service_requests_total");
    expect(metrics).toContain('service_requests_total{method="GET",route="/prepared",status="2xx"} 1');
  });

  it("sends HEAD without a body, and other methods never reach the shortcut", async () => {
    const seen: string[] = [];
    const base = await boot(seen);
    const head = await raw(base, "HEAD", "/prepared");
    expect(head.status).toBe(200);
    expect(head.body).toBe("");
    expect(head.headers["content-length"]).toBe(String(BODY.byteLength));
    const post = await raw(base, "POST", "/prepared");
    expect(post.status).toBe(404);
    expect(seen).toEqual(["HEAD /prepared -"]);
  });

  it("lets unanswered and failing requests take the normal path, reporting the failure", async () => {
    const seen: string[] = [];
    const base = await boot(seen);
    expect(JSON.parse((await raw(base, "GET", "/routed")).body)).toEqual({ routed: true });
    expect(JSON.parse((await raw(base, "GET", "/broken")).body)).toEqual({ fellThrough: true });
    expect(t?.errors.map((e) => (e.error as Error).message)).toEqual(["shortcut failed"]);
  });

  it("adds CORS headers for an allowed origin only", async () => {
    const base = await boot([], ["https://app.example"]);
    const allowed = await raw(base, "GET", "/prepared", { origin: "https://app.example" });
    expect(allowed.headers["access-control-allow-origin"]).toBe("https://app.example");
    expect(allowed.headers.vary).toBe("Origin");
    const other = await raw(base, "GET", "/prepared", { origin: "https://evil.example" });
    expect(other.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("answers through vellum.fetch the same way, and not before the instance is ready", async () => {
    const seen: string[] = [];
    await boot(seen);
    const res = await t?.fetch("/prepared?x=1");
    expect(res?.status).toBe(200);
    expect(await res?.text()).toBe('{"prepared":true}');
    expect(res?.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(seen).toEqual(["GET /prepared?x=1 -"]);
    await t?.vellum.close();
    const closed = await t?.vellum.fetch(new Request("http://vellum.test/prepared"));
    expect(closed?.status).toBe(503);
    expect(seen).toHaveLength(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ERROR_STATUS } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { probePlugin } from "./fixtures/probe-plugin.js";

let t: TestVellum;
beforeAll(async () => {
  t = await createTestVellum({ plugins: [probePlugin()] });
});
afterAll(() => t.close());

async function expectError(res: Response, code: keyof typeof API_ERROR_STATUS) {
  expect(res.status).toBe(API_ERROR_STATUS[code]);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = await res.json();
  expect(body.error.code).toBe(code);
  expect(body.error.request_id).toBe(res.headers.get("x-request-id"));
  expect(body.error.docs).toBe(`/docs/api/errors#${code}`);
  expect(typeof body.error.message).toBe("string");
  expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+|node_modules|SQLITE|\/tmp\//);
  return body;
}

const post = async (path: string, init: RequestInit = {}) =>
  t.fetch(path, {
    method: "POST",
    ...init,
    headers: { ...(await t.writeHeaders()), ...(init.headers as Record<string, string>) },
  });

describe("kernel-owned error codes", () => {
  it("invalid_json for a malformed body and for a non-object", async () => {
    const json = { "content-type": "application/json" };
    await expectError(await post("/api/v1/echo", { body: "{not json", headers: json }), "invalid_json");
    await expectError(await post("/api/v1/echo", { body: "[1,2]", headers: json }), "invalid_json");
    await expectError(await post("/api/v1/echo", { body: "null", headers: json }), "invalid_json");
    await expectError(await post("/api/v1/echo", { body: "", headers: json }), "invalid_json");
    const ok = await post("/api/v1/echo", { body: '{"a":1}', headers: json });
    expect(await ok.json()).toEqual({ received: { a: 1 } });
  });

  it("unsupported_media_type for a missing or wrong Content-Type", async () => {
    await expectError(
      await post("/api/v1/echo", { body: '{"a":1}', headers: { "content-type": "text/plain" } }),
      "unsupported_media_type",
    );
    await expectError(
      await post("/api/v1/echo", { body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } }),
      "unsupported_media_type",
    );
  });

  it("payload_too_large above 2 MiB, declared or streamed", async () => {
    const big = JSON.stringify({ x: "a".repeat(2 * 1024 * 1024) });
    await expectError(
      await post("/api/v1/echo", { body: big, headers: { "content-type": "application/json" } }),
      "payload_too_large",
    );
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 40; i++) controller.enqueue(new TextEncoder().encode("a".repeat(64 * 1024)));
        controller.close();
      },
    });
    const res = await post("/api/v1/echo", {
      body: stream,
      headers: { "content-type": "application/json" },
      duplex: "half",
    } as RequestInit);
    await expectError(res, "payload_too_large");
  });

  it("not_found for unknown routes, including other API majors", async () => {
    await expectError(await t.fetch("/api/v1/nope"), "not_found");
    await expectError(await t.fetch("/api/v2/echo"), "not_found");
    await expectError(await t.fetch("/"), "not_found");
  });

  it("method_not_allowed with Allow", async () => {
    const res = await t.fetch("/api/v1/echo");
    await expectError(res, "method_not_allowed");
    expect(res.headers.get("allow")).toBe("POST");
    const del = await t.fetch("/api/v1/page", { method: "DELETE" });
    await expectError(del, "method_not_allowed");
    expect(del.headers.get("allow")).toBe("GET, HEAD");
  });

  it("invalid_parameter for an out-of-range or malformed query integer", async () => {
    for (const q of ["0", "101", "abc", "1.5", "-1", "99999999999999"]) {
      await expectError(await t.fetch(`/api/v1/page?limit=${q}`), "invalid_parameter");
    }
    expect(await (await t.fetch("/api/v1/page?limit=100")).json()).toEqual({ limit: 100 });
  });

  it("internal_error hides the cause and logs it with the request id", async () => {
    const boom = await createTestVellum({
      plugins: [
        (await import("../src/index.js")).definePlugin({
          name: "boom",
          setup: (ctx) =>
            ctx.router.get("/boom", () => {
              throw new Error("SQLITE_CORRUPT at /var/lib/secret.db");
            }),
        })(),
      ],
    });
    const res = await boom.fetch("/boom", { headers: { "x-request-id": "trace-me-123" } });
    const body = await expectError(res, "internal_error");
    expect(body.error.request_id).toBe("trace-me-123");
    expect(body.error.message).toBe("An unexpected error occurred.");
    expect(boom.errors.some((e) => (e.error as Error).message.includes("SQLITE_CORRUPT"))).toBe(true);
    await boom.close();
  });
});

describe("a write that finds the data disk full", () => {
  it("answers 503 service_unavailable with Retry-After, and is reported once per 10 s", async () => {
    const full = await createTestVellum({
      plugins: [
        (await import("../src/index.js")).definePlugin({
          name: "full",
          setup: (ctx) =>
            ctx.router.get("/full", () => {
              const cause = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
              throw new Error("could not store the upload", { cause });
            }),
        })(),
      ],
    });
    for (let i = 0; i < 3; i++) {
      const res = await full.fetch("/full");
      const body = await expectError(res, "service_unavailable");
      expect(body.error.message).toBe("The change cannot be stored: the data disk is full.");
      expect(res.headers.get("retry-after")).toBe("30");
    }
    // The first failure reaches error subscribers; the next two, within 10 s, are only counted.
    expect(full.errors).toHaveLength(1);
    await full.close();
  });
});

describe("request ids and headers", () => {
  it.each(["/%ZZ", "/api/v1/articles/%ff%fe", "/api/v1/articles/%E0%A4%A", "/health/live/%"])(
    "invalid_parameter with the envelope, a request id and the security headers for the malformed path %s",
    async (path) => {
      const res = await t.fetch(path);
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.error).toMatchObject({ code: "invalid_parameter", docs: "/docs/api/errors#invalid_parameter" });
      expect(body.error.request_id).toBe(res.headers.get("x-request-id"));
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      const metrics = await t.vellum.metrics.registry.getSingleMetricAsString("service_requests_total");
      expect(metrics).toMatch(/service_requests_total\{method="GET",route="unmatched",status="4xx"\} [1-9]/);
    },
  );

  it("keeps a safe incoming X-Request-Id and replaces an unsafe one", async () => {
    const kept = await t.fetch("/api/v1/page", { headers: { "x-request-id": "abc.DEF_123-x" } });
    expect(kept.headers.get("x-request-id")).toBe("abc.DEF_123-x");
    for (const bad of ["has space", "a/b", "<script>", "x".repeat(129), "caf\u00e9", "a\\nb"]) {
      const res = await t.fetch("/api/v1/page", { headers: { "x-request-id": bad } });
      const id = res.headers.get("x-request-id") ?? "";
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    }
  });

  it("sends the security headers on every response, errors included", async () => {
    for (const res of [await t.fetch("/api/v1/page"), await t.fetch("/nope")]) {
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
    }
  });

  it("serves the error reference page with every code and a strict CSP", async () => {
    const res = await t.fetch("/docs/api/errors");
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await res.text();
    for (const code of Object.keys(API_ERROR_STATUS)) expect(html).toContain(`id="${code}"`);
  });
});

describe("versioning and flags", () => {
  it("hides a feature-flagged route unless the flag is on", async () => {
    await expectError(await t.fetch("/api/v1/ai/thing"), "not_found");
    const on = await createTestVellum({ plugins: [probePlugin()], config: { features: ["ai"] } });
    expect(await (await on.fetch("/api/v1/ai/thing")).json()).toEqual({ ai: true });
    await on.close();
  });

  it("marks a deprecated route with Deprecation and Sunset", async () => {
    const res = await t.fetch("/api/v1/old");
    expect(res.status).toBe(200);
    expect(res.headers.get("deprecation")).toBe("true");
    expect(res.headers.get("sunset")).toBe("Wed, 30 Jun 2027 00:00:00 GMT");
    expect(res.headers.get("link")).toBe('</docs/migrate>; rel="deprecation"');
  });
});

describe("CORS", () => {
  it("answers preflight and tags responses only for configured origins", async () => {
    const c = await createTestVellum({ plugins: [probePlugin()], config: { corsOrigins: ["https://app.example"] } });
    const pre = await c.fetch("/api/v1/echo", {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "POST" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(pre.headers.get("access-control-allow-headers")).toContain("x-csrf-token");
    const get = await c.fetch("/api/v1/page", { headers: { origin: "https://app.example" } });
    expect(get.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const other = await c.fetch("/api/v1/page", { headers: { origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    await c.close();
  });
});

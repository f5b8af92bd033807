import { stat } from "node:fs/promises";
import { join } from "node:path";
import { createConsola } from "consola";
import { afterEach, describe, expect, it } from "vitest";
import { createCsrfTokens } from "../src/security/csrf.js";
import { createTestVellum, TEST_API_KEY, type TestVellum } from "../src/testing/index.js";
import { probePlugin } from "./fixtures/probe-plugin.js";

let t: TestVellum;
afterEach(() => t?.close());

const boot = async (config = {}) => {
  t = await createTestVellum({ plugins: [probePlugin()], config });
  return t;
};

const echo = (headers: Record<string, string>, clientAddress = "203.0.113.7") =>
  t.fetch("/api/v1/echo", { method: "POST", json: { a: 1 }, headers, clientAddress });

async function codeOf(res: Response) {
  return { status: res.status, code: (await res.json()).error?.code };
}

describe("API key", () => {
  it("requires a Bearer key on writes and answers 401 with WWW-Authenticate", async () => {
    await boot();
    const csrf = await t.writeHeaders();
    const missing = await echo({ cookie: csrf.cookie!, "x-csrf-token": csrf["x-csrf-token"]! });
    expect(await codeOf(missing)).toEqual({ status: 401, code: "unauthorized" });
    expect(missing.headers.get("www-authenticate")).toBe("Bearer");
    const wrong = await echo({ ...csrf, authorization: "Bearer wrong-key-wrong-key-wrong-key" });
    expect(await codeOf(wrong)).toEqual({ status: 401, code: "unauthorized" });
    const basic = await echo({ ...csrf, authorization: `Basic ${TEST_API_KEY}` });
    expect(basic.status).toBe(401);
    expect((await echo(csrf)).status).toBe(200);
  });

  it("refuses every write when no key is configured", async () => {
    await boot({ security: { apiKey: "" } });
    expect((await echo(await t.writeHeaders())).status).toBe(401);
  });

  it("accepts X-API-Key only where the route allows it", async () => {
    await boot();
    const viaHeader = await t.fetch("/admin/run", { method: "POST", headers: { "x-api-key": TEST_API_KEY } });
    expect(viaHeader.status).toBe(200);
    const csrf = await t.writeHeaders();
    const echoViaHeader = await echo({
      cookie: csrf.cookie!,
      "x-csrf-token": csrf["x-csrf-token"]!,
      "x-api-key": TEST_API_KEY,
    });
    expect(echoViaHeader.status).toBe(401);
  });
});

describe("CSRF", () => {
  it("GET /api/v1/csrf answers the token with no-store and sets it as a signed svc_csrf cookie, once", async () => {
    await boot();
    const first = await t.fetch("/api/v1/csrf");
    expect(first.headers.get("cache-control")).toBe("no-store");
    const cookie = first.headers.getSetCookie()[0] ?? "";
    expect(cookie).toMatch(/^svc_csrf=[\w-]+\.[\w-]+; Path=\/; SameSite=Strict$/);
    const value = cookie.split(";")[0]!.slice("svc_csrf=".length);
    expect(await first.json()).toEqual({ token: value });
    const again = await t.fetch("/api/v1/csrf", { headers: { cookie: `svc_csrf=${value}` } });
    expect(again.headers.getSetCookie()).toEqual([]);
    expect(await again.json()).toEqual({ token: value });
    const forged = await t.fetch("/api/v1/csrf", { headers: { cookie: "svc_csrf=forged.token" } });
    expect((await forged.json()).token).not.toBe("forged.token");
  });

  it("never sets a cookie on a plain read, so shared caches may keep it", async () => {
    await boot();
    const read = await t.fetch("/api/v1/page");
    expect(read.status).toBe(200);
    expect(read.headers.getSetCookie()).toEqual([]);
  });

  it("marks the cookie Secure when the base URL is https", async () => {
    await boot({ baseUrl: "https://cms.example" });
    expect((await t.fetch("/api/v1/csrf")).headers.getSetCookie()[0]).toContain("; Secure");
  });

  it("refuses a missing header, a mismatch, and a forged (unsigned) cookie", async () => {
    await boot();
    const good = await t.writeHeaders();
    const auth = { authorization: good.authorization! };
    expect(await codeOf(await echo({ ...auth, cookie: good.cookie! }))).toEqual({ status: 403, code: "csrf_failed" });
    expect(await codeOf(await echo({ ...auth, "x-csrf-token": good["x-csrf-token"]! }))).toEqual({
      status: 403,
      code: "csrf_failed",
    });
    const other = createCsrfTokens("attacker-secret-attacker-secret-00").issue();
    expect(await codeOf(await echo({ ...auth, cookie: good.cookie!, "x-csrf-token": other }))).toEqual({
      status: 403,
      code: "csrf_failed",
    });
    expect(await codeOf(await echo({ ...auth, cookie: `svc_csrf=${other}`, "x-csrf-token": other }))).toEqual({
      status: 403,
      code: "csrf_failed",
    });
    const plain = "attacker-chosen-value";
    expect(await codeOf(await echo({ ...auth, cookie: `svc_csrf=${plain}`, "x-csrf-token": plain }))).toEqual({
      status: 403,
      code: "csrf_failed",
    });
    expect((await echo(good)).status).toBe(200);
  });

  it("remembers verified tokens without accepting anything near them", () => {
    const tokens = createCsrfTokens("server-secret-server-secret-server-0");
    const token = tokens.issue();
    const [nonce, mac] = token.split(".") as [string, string];
    for (let i = 0; i < 3; i++) expect(tokens.verify(token)).toBe(true);
    const flipped = `${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`;
    expect(tokens.verify(`${nonce}.${flipped}`)).toBe(false);
    expect(tokens.verify(`${nonce}x.${mac}`)).toBe(false);
    expect(tokens.verify(`${token}x`)).toBe(false);
    expect(tokens.verify(token.slice(0, -1))).toBe(false);
    expect(createCsrfTokens("another-secret-another-secret-00000").verify(token)).toBe(false);
    // Past the memory's size the first token is forgotten, and verified again by its signature.
    for (let i = 0; i < 1100; i++) {
      const other = createCsrfTokens("server-secret-server-secret-server-0");
      expect(tokens.verify(`${other.issue()}`)).toBe(true);
    }
    expect(tokens.verify(token)).toBe(true);
  });

  it("keeps the CSRF secret across restarts (stored under settings/, readable by the owner only)", async () => {
    await boot();
    const headers = await t.writeHeaders();
    const dataDir = t.dataDir;
    expect((await stat(join(dataDir, "settings", "csrf-secret"))).mode & 0o777).toBe(0o600);
    await t.vellum.close();
    const again = await createTestVellum({ plugins: [probePlugin()], dataDir });
    expect(
      (await again.fetch("/api/v1/echo", { method: "POST", json: {}, headers, clientAddress: "198.51.100.1" })).status,
    ).toBe(200);
    await again.close();
  });
});

describe("lockouts", () => {
  it("locks an IP out after 10 failures, counts it, and checks lockout before key before CSRF", async () => {
    await boot();
    const good = await t.writeHeaders();
    const wrongKey = { ...good, authorization: "Bearer not-the-key-not-the-key-xx" };
    for (let i = 0; i < 9; i++) expect((await echo(wrongKey)).status).toBe(401);
    const noCsrf = { authorization: good.authorization! };
    expect(await codeOf(await echo(noCsrf))).toEqual({ status: 403, code: "csrf_failed" });
    expect((await echo(wrongKey)).status).toBe(401);
    const locked = await echo(good);
    expect(await codeOf(locked)).toEqual({ status: 429, code: "locked_out" });
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(800);
    expect(await codeOf(await echo({}))).toEqual({ status: 429, code: "locked_out" });
    expect((await echo(good, "198.51.100.2")).status).toBe(200);
    expect(await t.vellum.metrics.registry.getSingleMetricAsString("service_auth_lockouts_total")).toContain(
      "service_auth_lockouts_total 1",
    );
  });

  it("does not count requests that present no key: anonymous traffic cannot lock the key holder out", async () => {
    await boot();
    const good = await t.writeHeaders();
    const anonymous = { cookie: good.cookie!, "x-csrf-token": good["x-csrf-token"]! };
    for (let i = 0; i < 25; i++)
      expect(await codeOf(await echo(anonymous))).toEqual({ status: 401, code: "unauthorized" });
    expect((await echo(good)).status).toBe(200);
    expect(await t.vellum.metrics.registry.getSingleMetricAsString("service_auth_lockouts_total")).toContain(
      "service_auth_lockouts_total 0",
    );
  });

  it("uses configured thresholds", async () => {
    await boot({ security: { lockout: { maxFailures: 2, durationMs: 50 } } });
    const good = await t.writeHeaders();
    const wrong = { ...good, authorization: "Bearer not-the-key-not-the-key-xx" };
    await echo(wrong);
    await echo(wrong);
    expect((await echo(good)).status).toBe(429);
    await new Promise((r) => setTimeout(r, 80));
    expect((await echo(good)).status).toBe(200);
  });
});

describe("rate limits", () => {
  it("limits per client IP with RateLimit-* and Retry-After headers", async () => {
    await boot();
    for (let i = 0; i < 3; i++) {
      const res = await t.fetch("/api/v1/limited", { clientAddress: "192.0.2.1" });
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-remaining")).toBe(String(2 - i));
    }
    const limited = await t.fetch("/api/v1/limited", { clientAddress: "192.0.2.1" });
    expect(await codeOf(limited)).toEqual({ status: 429, code: "rate_limited" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("ratelimit-limit")).toBe("3");
    expect((await t.fetch("/api/v1/limited", { clientAddress: "192.0.2.2" })).status).toBe(200);
  });

  it("takes the client IP from X-Forwarded-For only when trusting a proxy, counting hops from the right", async () => {
    await boot({ security: { trustProxy: 1 } });
    const from = (xff: string) =>
      t.fetch("/api/v1/limited", { clientAddress: "10.0.0.1", headers: { "x-forwarded-for": xff } });
    for (let i = 0; i < 3; i++) expect((await from(`1.1.1.${i}, 192.0.2.9`)).status).toBe(200);
    expect((await from("spoofed, 192.0.2.9")).status).toBe(429);
    expect((await from("192.0.2.10")).status).toBe(200);
  });

  it("warns once when a loopback or private peer sends X-Forwarded-For while trust-proxy is off", async () => {
    const warnings: string[] = [];
    const logger = createConsola({
      level: 3,
      reporters: [{ log: (entry) => void (entry.type === "warn" && warnings.push(entry.args.join(" "))) }],
    });
    t = await createTestVellum({ plugins: [probePlugin()], config: { logger, accessLog: false } });
    const via = (clientAddress: string, forwarded: string) =>
      t.fetch("/api/v1/page", { clientAddress, headers: { "x-forwarded-for": forwarded } });
    await via("203.0.113.9", "198.51.100.1");
    await t.fetch("/api/v1/page", { clientAddress: "10.0.0.5" });
    expect(warnings).toEqual([]);
    await via("10.0.0.5", "198.51.100.1");
    await via("127.0.0.1", "198.51.100.2");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("X-Forwarded-For from 10.0.0.5 while SERVICE_TRUST_PROXY is off");
  });

  it("ignores X-Forwarded-For without trust-proxy", async () => {
    await boot();
    for (let i = 0; i < 3; i++) {
      await t.fetch("/api/v1/limited", { clientAddress: "192.0.2.5", headers: { "x-forwarded-for": `9.9.9.${i}` } });
    }
    const res = await t.fetch("/api/v1/limited", {
      clientAddress: "192.0.2.5",
      headers: { "x-forwarded-for": "9.9.9.99" },
    });
    expect(res.status).toBe(429);
  });
});

import { createTestVellum, TEST_API_KEY, type TestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { health } from "../src/index.js";
import { parseExposition } from "./prometheus.js";

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Every metric the seed names, with the type it must have. */
const SEED_METRICS = {
  service_requests_total: "counter",
  service_memory_bytes: "gauge",
  service_wal_size_bytes: "gauge",
  service_migration_drift_detected: "gauge",
  service_write_queue_depth: "gauge",
  service_auth_lockouts_total: "counter",
  service_wal_checkpoint_duration_ms: "gauge",
  service_dead_letter_queue_size: "gauge",
};

describe("/metrics access", () => {
  it("serves loopback clients without a key, in the registry's content type", async () => {
    t = await createTestVellum({ plugins: [health()] });
    for (const clientAddress of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
      const res = await t.fetch("/metrics", { clientAddress });
      expect(res.status, clientAddress).toBe(200);
      expect(res.headers.get("content-type")).toBe(t.vellum.metrics.registry.contentType);
    }
  });

  it("answers 403 forbidden to other clients without the key, 200 with it", async () => {
    t = await createTestVellum({ plugins: [health()] });
    const denied = await t.fetch("/metrics", { clientAddress: "203.0.113.7" });
    expect(denied.status).toBe(403);
    const body = await denied.json();
    expect(body.error).toMatchObject({ code: "forbidden", docs: "/docs/api/errors#forbidden" });
    const wrongKey = await t.fetch("/metrics", {
      clientAddress: "203.0.113.7",
      headers: { authorization: "Bearer not-the-key-at-all-0000000" },
    });
    expect(wrongKey.status).toBe(403);
    const allowed = await t.fetch("/metrics", {
      clientAddress: "203.0.113.7",
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain("service_memory_bytes");
  });

  it("counts wrong keys toward the client's lockout, like failed writes", async () => {
    const instance = await createTestVellum({
      plugins: [health()],
      config: { security: { lockout: { maxFailures: 3 } } },
    });
    t = instance;
    const guess = (key: string) =>
      instance.fetch("/metrics", { clientAddress: "203.0.113.9", headers: { authorization: `Bearer ${key}` } });
    for (let i = 0; i < 3; i++) expect((await guess(`wrong-key-number-${i}-0000000000`)).status).toBe(403);
    const locked = await guess(TEST_API_KEY);
    expect(locked.status).toBe(429);
    expect((await locked.json()).error.code).toBe("locked_out");
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    const other = await t.fetch("/metrics", {
      clientAddress: "203.0.113.10",
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    expect(other.status).toBe(200);
  });

  it("judges the client by the trust-proxy rule, so a forged X-Forwarded-For does not pass as loopback", async () => {
    t = await createTestVellum({ plugins: [health()], config: { security: { trustProxy: true } } });
    const viaProxy = await t.fetch("/metrics", {
      clientAddress: "127.0.0.1",
      headers: { "x-forwarded-for": "127.0.0.1, 198.51.100.4" },
    });
    expect(viaProxy.status).toBe(403);
    const localViaProxy = await t.fetch("/metrics", {
      clientAddress: "127.0.0.1",
      headers: { "x-forwarded-for": "127.0.0.1" },
    });
    expect(localViaProxy.status).toBe(200);
  });
});

describe("/metrics content", () => {
  it("exposes every metric the seed names, with default process metrics prefixed service_", async () => {
    t = await createTestVellum({ plugins: [health({ storageQuotaBytes: 10_000 })] });
    expect((await t.fetch("/health/storage")).status).toBe(503);
    const queue = t.vellum.queue();
    await queue.enqueue(t.vellum.db(), "articles", "create", {});
    const exposition = parseExposition(await (await t.fetch("/metrics")).text());
    for (const [name, type] of Object.entries(SEED_METRICS)) expect(exposition.types.get(name), name).toBe(type);
    for (const name of ["service_process_cpu_seconds_total", "service_nodejs_heap_size_used_bytes"]) {
      expect(exposition.types.has(name), name).toBe(true);
    }
    expect([...exposition.types.keys()].every((name) => name.startsWith("service_"))).toBe(true);
    const fiveXX = exposition.samples.find((s) => s.name === "service_requests_total" && s.labels.status === "5xx");
    expect(fiveXX).toMatchObject({ labels: { method: "GET", route: "/health/storage", status: "5xx" }, value: 1 });
    const depth = exposition.samples.find((s) => s.name === "service_write_queue_depth");
    expect(depth).toMatchObject({ labels: { queue: "articles" }, value: 1 });
    const memory = exposition.samples.find((s) => s.name === "service_memory_bytes");
    expect(memory?.value).toBeGreaterThan(10 * 1024 * 1024);
    const wal = exposition.samples.find((s) => s.name === "service_wal_size_bytes");
    expect(wal?.value).toBe(t.vellum.database().walSizeBytes());
  });

  it("labels requests by route pattern and status class, never the raw path or query", async () => {
    t = await createTestVellum({ plugins: [health()] });
    await t.fetch("/health/db?secret-query=1");
    await t.fetch("/no/such/path/abc123");
    const text = await (await t.fetch("/metrics")).text();
    expect(text).not.toContain("secret-query");
    expect(text).not.toContain("abc123");
    const routes = new Set(
      parseExposition(text)
        .samples.filter((s) => s.name === "service_requests_total")
        .map((s) => s.labels.route),
    );
    expect(routes).toEqual(new Set(["/health/db", "unmatched"]));
  });

  it("reports storage gauges for the quota alerts", async () => {
    t = await createTestVellum({ plugins: [health({ storageQuotaBytes: 1_000_000 })] });
    const samples = parseExposition(await (await t.fetch("/metrics")).text()).samples;
    const value = (name: string) => samples.find((s) => s.name === name)?.value;
    expect(value("service_storage_quota_bytes")).toBe(1_000_000);
    expect(value("service_storage_used_bytes")).toBeGreaterThan(0);
    expect(value("service_data_disk_used_ratio")).toBeGreaterThan(0);
  });
});

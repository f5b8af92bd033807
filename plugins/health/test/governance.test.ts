import { createTestVellum, TEST_API_KEY, type TestVellum } from "@vellum/core/testing";
import { createConsola } from "consola";
import { afterEach, describe, expect, it } from "vitest";
import { health } from "../src/index.js";
import { getJson } from "./http.js";
import { component, extras } from "./fixtures/plugins.js";
import { metricValue } from "./prometheus.js";

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const get = (path: string) => getJson(t, path);

describe("/health/ethics", () => {
  it("is compliant with the default configuration, and says nothing about backups while no component claims any", async () => {
    t = await createTestVellum({ plugins: [health({ environment: {} })] });
    const { status, body } = await get("/health/ethics");
    expect(status).toBe(200);
    expect(body).toEqual({
      compliant: true,
      checks: {
        search_queries_logged: false,
        external_telemetry: false,
        backups_encrypted: null,
        metrics_local_only: true,
      },
      details: {
        query_logging: [],
        telemetry_signals: [],
        backups: "none",
        metrics_routes: [{ path: "/metrics", plugin: "health" }],
      },
    });
  });

  it("is not compliant when a telemetry exporter is configured, naming it but never its value", async () => {
    const environment = { OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318", OTEL_TRACES_EXPORTER: "none" };
    t = await createTestVellum({ plugins: [health({ environment })] });
    const { body } = await get("/health/ethics");
    expect(body.compliant).toBe(false);
    expect(body.checks).toMatchObject({ external_telemetry: true, metrics_local_only: false });
    expect(body.details.telemetry_signals).toEqual(["OTEL_EXPORTER_OTLP_ENDPOINT"]);
    expect(JSON.stringify(body)).not.toContain("collector.example");
  });

  it("flags an agent preloaded through NODE_OPTIONS", async () => {
    t = await createTestVellum({ plugins: [health({ environment: { NODE_OPTIONS: "--require dd-trace/init" } })] });
    const { body } = await get("/health/ethics");
    expect(body.checks.external_telemetry).toBe(true);
    expect(body.details.telemetry_signals).toEqual(["NODE_OPTIONS"]);
  });

  it("takes backups_encrypted from the components' claims: all true, or any false", async () => {
    const claiming = (name: string, encrypted: boolean) =>
      component(name, () => ({ state: "ok", ethics: { backups_encrypted: encrypted } }));
    const cases = [
      [[claiming("archive", true)], "encrypted", true],
      [[claiming("archive", true), claiming("mirror", true)], "encrypted", true],
      [[claiming("archive", true), claiming("mirror", false)], "unencrypted", false],
    ] as const;
    for (const [plugins, mode, encrypted] of cases) {
      t = await createTestVellum({ plugins: [health({ environment: {} }), ...plugins] });
      const { body } = await get("/health/ethics");
      expect(body.details.backups, mode).toBe(mode);
      expect(body.checks.backups_encrypted, mode).toBe(encrypted);
      expect(body.compliant, mode).toBe(encrypted);
      await t.close();
      t = undefined;
    }
  });

  it("makes no claim for a component whose check fails", async () => {
    const broken = () => {
      throw new Error("no answer");
    };
    t = await createTestVellum({ plugins: [health({ environment: {} }), component("archive", broken)] });
    const { body } = await get("/health/ethics");
    expect(body.checks.backups_encrypted).toBeNull();
    expect(body.details.backups).toBe("none");
  });

  it("is not compliant when a route declares query logging or a component claims it", async () => {
    const logging = component("finder", () => ({ state: "ok", ethics: { search_queries_logged: true } }));
    t = await createTestVellum({ plugins: [health({ environment: {} }), extras({ logQueries: true }), logging] });
    const { body } = await get("/health/ethics");
    expect(body.compliant).toBe(false);
    expect(body.checks.search_queries_logged).toBe(true);
    expect(body.details.query_logging).toEqual(["GET /api/v1/extras/find", "component finder"]);
  });

  it("is compliant when a component claims it does not log queries", async () => {
    const quiet = component("finder", () => ({ state: "ok", ethics: { search_queries_logged: false } }));
    t = await createTestVellum({ plugins: [health({ environment: {} }), quiet] });
    const { body } = await get("/health/ethics");
    expect(body).toMatchObject({ compliant: true, checks: { search_queries_logged: false } });
  });

  it("is backed by an access log that never carries query strings", async () => {
    const lines: string[] = [];
    const logger = createConsola({ level: 3, reporters: [{ log: (entry) => lines.push(entry.args.join(" ")) }] });
    t = await createTestVellum({ plugins: [health({ environment: {} })], config: { logger } });
    await t.fetch("/health/db?q=very-private-query");
    expect(lines.some((l) => l.includes("/health/db"))).toBe(true);
    expect(lines.join("\n")).not.toContain("very-private-query");
    expect((await get("/health/ethics")).body.checks.search_queries_logged).toBe(false);
  });
});

describe("/health/security", () => {
  it("reports the key as configured and strong without revealing it, CSRF on, no lockouts", async () => {
    t = await createTestVellum({ plugins: [health()] });
    const res = await t.fetch("/health/security");
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).not.toContain(TEST_API_KEY);
    expect(JSON.parse(text)).toEqual({
      status: "ok",
      checks: {
        api_key_configured: true,
        api_key_strong: true,
        csrf_enabled: true,
        lockout_enabled: true,
        lockouts_active: 0,
        trust_proxy: false,
        counter_store: { kind: "memory", shared: false, state: "ok" },
      },
      lockout: { max_failures: 10, window_seconds: 600, duration_seconds: 900 },
    });
  });

  it("is degraded without a key", async () => {
    t = await createTestVellum({ plugins: [health()], config: { security: { apiKey: "" } } });
    const { body } = await get("/health/security");
    expect(body.status).toBe("degraded");
    expect(body.checks).toMatchObject({ api_key_configured: false, api_key_strong: false });
  });

  it("counts lockouts active right now, and shows the trust-proxy setting", async () => {
    t = await createTestVellum({
      plugins: [health(), extras()],
      config: { security: { trustProxy: 1, lockout: { maxFailures: 2 } } },
    });
    for (let i = 0; i < 2; i++) {
      await t.fetch("/api/v1/extras/items", {
        method: "POST",
        clientAddress: "127.0.0.1",
        headers: { authorization: "Bearer wrong-key-wrong-key-wrong", "x-forwarded-for": "198.51.100.9" },
      });
    }
    const { body } = await get("/health/security");
    expect(body.checks).toMatchObject({ lockouts_active: 1, trust_proxy: 1 });
    expect(body.lockout.max_failures).toBe(2);
    const metrics = await (await t.fetch("/metrics")).text();
    expect(metricValue(metrics, "service_auth_lockouts_total")).toBe(1);
  });
});

describe("/health/ai", () => {
  it("is disabled unless the ai feature flag is on", async () => {
    t = await createTestVellum({ plugins: [health(), extras()] });
    expect(await get("/health/ai")).toEqual({ status: 200, body: { status: "disabled", features: [], endpoints: [] } });
  });

  it("is ok when the flag is on and AI routes are served", async () => {
    t = await createTestVellum({ plugins: [health(), extras()], config: { features: ["ai"] } });
    expect(await get("/health/ai")).toEqual({
      status: 200,
      body: { status: "ok", features: ["ai"], endpoints: ["GET /api/v1/ai/related/:slug"] },
    });
  });

  it("takes the state of the component registered as ai", async () => {
    t = await createTestVellum({
      plugins: [health(), extras(), component("ai", () => ({ state: "degraded", detail: { index: "stale" } }))],
      config: { features: ["ai"] },
    });
    const { status, body } = await get("/health/ai");
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "degraded", detail: { index: "stale" } });
  });

  it("is unavailable when the flag is on but nothing serves AI", async () => {
    t = await createTestVellum({ plugins: [health()], config: { features: ["ai"] } });
    const { status, body } = await get("/health/ai");
    expect(status).toBe(503);
    expect(body).toEqual({ status: "unavailable", features: ["ai"], endpoints: [] });
  });
});

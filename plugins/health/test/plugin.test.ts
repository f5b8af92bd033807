import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VellumError } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import * as entry from "../src/index.js";
import { health } from "../src/index.js";
import { component } from "./fixtures/plugins.js";

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const ENDPOINTS = [
  "/health",
  "/health/live",
  "/health/ready",
  "/health/db",
  "/health/mirror",
  "/health/workers",
  "/health/storage",
  "/health/dependencies",
  "/health/migrations",
  "/health/ethics",
  "/health/ai",
  "/health/security",
];

describe("health plugin", () => {
  it("exports only the plugin factory", () => {
    expect(Object.keys(entry)).toEqual(["health"]);
    expect(health().name).toBe("health");
  });

  it("serves the health endpoints, a registered component's and /metrics, none needing the key", async () => {
    t = await createTestVellum({ plugins: [health(), component("mirror", () => ({ state: "ok" }))] });
    for (const path of ENDPOINTS) {
      const res = await t.fetch(path, { clientAddress: "203.0.113.1" });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type"), path).toContain("application/json");
    }
    expect((await t.fetch("/metrics")).status).toBe(200);
  });

  it("answers every health route with JSON even while the database is closed", async () => {
    t = await createTestVellum({ plugins: [health(), component("mirror", () => ({ state: "ok" }))] });
    await t.vellum.db().destroy();
    for (const path of [...ENDPOINTS, "/metrics"]) {
      const res = await t.fetch(path);
      expect(res.status, path).not.toBe(500);
      if (path !== "/metrics") expect(await res.json(), path).toEqual(expect.any(Object));
    }
  });

  it.each([
    [{ plugins: [health({ storage: { fullRatio: 1.5 } })] }, "pluginOptions.health.storage.fullRatio"],
    [{ plugins: [health({ storage: { warnRatio: 0.95 } })] }, "pluginOptions.health.storage.warnRatio"],
    [{ plugins: [health({ wal: { idleMs: -1 } })] }, "pluginOptions.health.wal.idleMs"],
    [{ plugins: [health({ storageQuotaBytes: 0 })] }, "STORAGE_QUOTA_GB"],
    [{ plugins: [health({ checkTimeoutMs: 0 })] }, "pluginOptions.health.checkTimeoutMs"],
    [{ plugins: [health({ expect: ["no such/name"] })] }, "pluginOptions.health.expect"],
  ])("refuses invalid settings at start with VELLUM_CONFIG_INVALID naming them (%#)", async (options, named) => {
    const dataDir = await mkdtemp(join(tmpdir(), "vellum-health-options-"));
    try {
      await expect(createTestVellum({ ...options, dataDir })).rejects.toSatisfy(
        (error: unknown) => VellumError.is(error) && error.message.includes(named),
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrationTableName } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { health } from "../src/index.js";
import { shelf } from "./fixtures/plugins.js";
import { metricValue } from "./prometheus.js";

let t: TestVellum | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

async function scrape(instance: TestVellum): Promise<string> {
  return (await instance.fetch("/metrics")).text();
}

describe("/health/migrations", () => {
  it("lists applied migrations per plugin, nothing pending, no drift", async () => {
    t = await createTestVellum({ plugins: [health(), shelf()] });
    const res = await t.fetch("/health/migrations");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ status: "ok", pending: [], drift: false, drifted: [] });
    expect(body.applied).toEqual(
      expect.arrayContaining([
        { plugin: "core", name: "0001_vellum_jobs", applied_at: expect.any(String) },
        { plugin: "shelf", name: "0001_create", applied_at: expect.any(String) },
      ]),
    );
    expect(metricValue(await scrape(t), "service_migration_drift_detected")).toBe(0);
  });

  it("detects a tampered checksum after a restart: drift true and the gauge at 1", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vellum-health-drift-"));
    const first = await createTestVellum({ plugins: [health(), shelf()], dataDir });
    await first.vellum
      .db()
      .updateTable(migrationTableName("shelf"))
      .set({ checksum: "tampered" })
      .where("name", "=", "0001_create")
      .execute();
    await first.close();

    t = await createTestVellum({ plugins: [health(), shelf()], dataDir });
    const res = await t.fetch("/health/migrations");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      status: "degraded",
      drift: true,
      drifted: [{ plugin: "shelf", name: "0001_create", kind: "checksum_changed" }],
    });
    expect(metricValue(await scrape(t), "service_migration_drift_detected")).toBe(1);
    expect((await (await t.fetch("/health")).json()).components.migrations).toBe("degraded");
  });

  it("detects an applied migration that is missing from the code", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vellum-health-drift-"));
    const first = await createTestVellum({ plugins: [health(), shelf()], dataDir });
    await first.close();
    t = await createTestVellum({ plugins: [health()], dataDir });
    const body = await (await t.fetch("/health/migrations")).json();
    expect(body.drift).toBe(false);
    await t.vellum
      .db()
      .insertInto(migrationTableName("core"))
      .values({ name: "0099_gone", checksum: "x", applied_at: "2025-01-01T00:00:00.000Z" })
      .execute();
    const after = await (await t.fetch("/health/migrations")).json();
    expect(after.drifted).toEqual([{ plugin: "core", name: "0099_gone", kind: "missing_from_code" }]);
    expect(metricValue(await scrape(t), "service_migration_drift_detected")).toBe(1);
  });
});

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { health } from "../src/index.js";
import { slowRoute } from "./fixtures/plugins.js";
import { metricValue } from "./prometheus.js";

let t: TestVellum | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

const MIB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(done: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await sleep(25);
  }
}

async function createBlobTable(instance: TestVellum): Promise<void> {
  await instance.vellum
    .db()
    .schema.createTable("test_blobs")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("data", "blob", (c) => c.notNull())
    .execute();
}

async function writeBlobs(instance: TestVellum, count: number, bytes: number): Promise<void> {
  await instance.vellum
    .db()
    .transaction()
    .execute(async (trx) => {
      for (let i = 0; i < count; i++)
        await trx
          .insertInto("test_blobs")
          .values({ data: Buffer.alloc(bytes, i % 251) })
          .execute();
    });
}

describe("WAL upkeep", () => {
  it("checkpoints a WAL that grew past 32 MB back down and times it", async () => {
    t = await createTestVellum({ plugins: [health({ wal: { checkIntervalMs: 50, idleMs: 3_600_000 } })] });
    const instance = t;
    await createBlobTable(instance);
    await writeBlobs(instance, 40, MIB);

    await until(async () => {
      const db = await (await instance.fetch("/health/db")).json();
      return db.last_checkpoint?.trigger === "size" && db.wal_size_bytes < MIB;
    });
    const db = await (await instance.fetch("/health/db")).json();
    expect(db.last_checkpoint.wal_bytes_before).toBeGreaterThanOrEqual(32 * MIB);
    expect(db.last_checkpoint.busy).toBe(false);
    expect(instance.vellum.database().walSizeBytes()).toBeLessThan(MIB);

    const metrics = await (await instance.fetch("/metrics")).text();
    const duration = metricValue(metrics, "service_wal_checkpoint_duration_ms");
    expect(duration).toBeGreaterThan(0);
    expect(duration).toBe(db.last_checkpoint.duration_ms);
    expect(
      metricValue(metrics, "service_wal_checkpoints_total", { trigger: "size", result: "done" }),
    ).toBeGreaterThanOrEqual(1);
    expect(metricValue(metrics, "service_wal_size_bytes")).toBeLessThan(MIB);
  });

  it("checkpoints when idle: no write for idleMs and no request in flight", async () => {
    t = await createTestVellum({ plugins: [health({ wal: { checkIntervalMs: 25, idleMs: 300 } })] });
    const instance = t;
    await createBlobTable(instance);
    await until(() => instance.vellum.database().walSizeBytes() === 0);

    const started = Date.now();
    await writeBlobs(instance, 1, 64 * 1024);
    expect(instance.vellum.database().walSizeBytes()).toBeGreaterThan(0);
    await until(() => instance.vellum.database().walSizeBytes() === 0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const metrics = await (await instance.fetch("/metrics")).text();
    expect(
      metricValue(metrics, "service_wal_checkpoints_total", { trigger: "idle", result: "done" }),
    ).toBeGreaterThanOrEqual(1);
    for (const path of ["/health", "/health/ready", "/health/dependencies", "/health/migrations", "/metrics"]) {
      await instance.fetch(path);
    }
    expect(instance.vellum.database().walSizeBytes(), "health checks must not write").toBe(0);
  });

  it("does not checkpoint for idleness while writes keep coming", async () => {
    t = await createTestVellum({ plugins: [health({ wal: { checkIntervalMs: 25, idleMs: 1000 } })] });
    const instance = t;
    const idleCheckpoints = async () =>
      metricValue(await (await instance.fetch("/metrics")).text(), "service_wal_checkpoints_total", {
        trigger: "idle",
        result: "done",
      }) ?? 0;
    await createBlobTable(instance);
    await until(() => instance.vellum.database().walSizeBytes() === 0);
    const before = await idleCheckpoints();
    const stopAt = Date.now() + 2000;
    while (Date.now() < stopAt) {
      await writeBlobs(instance, 1, 1024);
      await sleep(50);
    }
    expect(await idleCheckpoints()).toBe(before);
    expect(instance.vellum.database().walSizeBytes()).toBeGreaterThan(0);
    await until(() => instance.vellum.database().walSizeBytes() === 0);
    expect(await idleCheckpoints()).toBe(before + 1);
  });

  it("does not checkpoint for idleness while a request is in flight", async () => {
    const slow = slowRoute();
    t = await createTestVellum({ plugins: [health({ wal: { checkIntervalMs: 25, idleMs: 200 } }), slow.plugin] });
    const instance = t;
    await createBlobTable(instance);
    await until(() => instance.vellum.database().walSizeBytes() === 0);
    const pending = instance.fetch("/api/v1/slow");
    await writeBlobs(instance, 1, 1024);
    await sleep(600);
    expect(instance.vellum.database().walSizeBytes()).toBeGreaterThan(0);
    slow.release();
    await pending;
    await until(() => instance.vellum.database().walSizeBytes() === 0);
  });

  it("records a checkpoint that a reader kept busy, backs off, and finishes once the reader is gone", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vellum-health-busy-"));
    const path = join(dataDir, "db", "vellum.sqlite");
    t = await createTestVellum({
      dataDir,
      plugins: [health({ wal: { checkIntervalMs: 25, idleMs: 100 } })],
      config: { database: { sqlite: { path, busyTimeoutMs: 20 } } },
    });
    const instance = t;
    await createBlobTable(instance);
    await writeBlobs(instance, 1, 1024);
    const reader = new Database(path, { readonly: true });
    try {
      reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM test_blobs").get();
      await until(async () => {
        const metrics = await (await instance.fetch("/metrics")).text();
        return (metricValue(metrics, "service_wal_checkpoints_total", { trigger: "idle", result: "busy" }) ?? 0) >= 1;
      });
      const db = await (await instance.fetch("/health/db")).json();
      expect(db.last_checkpoint).toMatchObject({ trigger: "idle", busy: true });
      expect(instance.vellum.database().walSizeBytes()).toBeGreaterThan(0);
      reader.exec("COMMIT");
    } finally {
      reader.close();
    }
    await until(() => instance.vellum.database().walSizeBytes() === 0);
    expect((await (await instance.fetch("/health/db")).json()).last_checkpoint).toMatchObject({ busy: false });
  });
});

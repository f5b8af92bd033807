import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { definePlugin } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { health } from "../src/index.js";
import { getJson } from "./http.js";
import { missingIndex, reporter } from "./fixtures/plugins.js";

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const get = (path: string) => getJson(t, path);

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("/health/db", () => {
  it("reports latency and WAL size while the database is open", async () => {
    t = await createTestVellum({ plugins: [health()] });
    const { status, body } = await get("/health/db");
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "ok", latency_ms: expect.any(Number), wal_size_bytes: expect.any(Number) });
    expect(body.wal_size_bytes).toBe(t.vellum.database().walSizeBytes());
  });

  it("is 503 unavailable once the database is closed, without internals in the body", async () => {
    t = await createTestVellum({ plugins: [health()] });
    await t.vellum.db().destroy();
    const { status, body } = await get("/health/db");
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "unavailable", latency_ms: null, reason: "closed" });
    expect(JSON.stringify(body)).not.toMatch(/destroyed|sqlite|\//i);
  });
});

describe("/health/db timeouts", () => {
  it("is 503 with reason timeout when requests would wait behind a long transaction", async () => {
    t = await createTestVellum({ plugins: [health({ checkTimeoutMs: 150 })] });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let holding!: () => void;
    const held = new Promise<void>((resolve) => {
      holding = resolve;
    });
    const transaction = t.vellum
      .db()
      .transaction()
      .execute(async (trx) => {
        await trx.selectFrom("sqlite_master").selectAll().execute();
        holding();
        await gate;
      });
    await held;
    const { status, body } = await get("/health/db");
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "unavailable", reason: "timeout" });
    release();
    await transaction;
    expect((await get("/health/db")).status).toBe(200);
  });
});

describe("/health/search", () => {
  it("is absent when no plugin reports search", async () => {
    t = await createTestVellum({ plugins: [health()] });
    expect(await get("/health/search")).toEqual({
      status: 200,
      body: { status: "absent", state: "absent", documents: null, indexed_at: null, stale: null },
    });
  });

  it("passes on what the search plugin reports when healthy", async () => {
    const indexedAt = "2025-01-01T00:00:00.000Z";
    const report = { name: "search", ok: true, detail: { documents: 42, indexed_at: indexedAt, stale: false } };
    t = await createTestVellum({ plugins: [health(), reporter("search", () => report)] });
    expect(await get("/health/search")).toEqual({
      status: 200,
      body: { status: "ok", state: "ok", documents: 42, indexed_at: indexedAt, stale: false },
    });
  });

  it("is degraded when the index is missing", async () => {
    t = await createTestVellum({ plugins: [health(), reporter("search", () => missingIndex("degraded"))] });
    const { status, body } = await get("/health/search");
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "degraded", state: "degraded", documents: 0 });
  });

  it("is degraded, and 503, when search reports unavailable", async () => {
    t = await createTestVellum({ plugins: [health(), reporter("search", () => missingIndex("unavailable"))] });
    const { status, body } = await get("/health/search");
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "degraded", state: "unavailable" });
  });

  it("treats a report without a state as ok/unavailable by its ok flag", async () => {
    t = await createTestVellum({ plugins: [health(), reporter("search", () => ({ name: "search", ok: false }))] });
    expect((await get("/health/search")).body.state).toBe("unavailable");
  });
});

describe("/health/workers", () => {
  it("reports queue depth and dead letters per queue, degraded past the limits", async () => {
    t = await createTestVellum({ plugins: [health({ queue: { depthLimit: 2, deadLetterLimit: 0 } })] });
    const idle = await get("/health/workers");
    expect(idle).toEqual({
      status: 200,
      body: { status: "ok", queue_depth: 0, dead_letter: 0, running: true, workers: [] },
    });
    const queue = t.vellum.queue();
    for (let i = 0; i < 3; i++) await queue.enqueue(t.vellum.db(), "unhandled", "noop", { i });
    const busy = await get("/health/workers");
    expect(busy.body).toMatchObject({
      status: "degraded",
      queue_depth: 3,
      workers: [{ queue: "unhandled", queued: 3, dead_letter: 0 }],
    });
  });

  it("lists every queue that has a worker, idle ones included", async () => {
    const worker = definePlugin({
      name: "worker",
      setup: (ctx) => ctx.queue.process("mail", async () => undefined),
    });
    t = await createTestVellum({ plugins: [health(), worker()] });
    expect((await get("/health/workers")).body.workers).toEqual([{ queue: "mail", queued: 0, dead_letter: 0 }]);
  });

  it("counts jobs that exhausted their retries as dead letters", async () => {
    t = await createTestVellum({ plugins: [health({ queue: { deadLetterLimit: 0 } })] });
    const queue = t.vellum.queue();
    queue.process(
      "doomed",
      async () => {
        throw new Error("always fails");
      },
      { maxAttempts: 1 },
    );
    await queue.enqueue(t.vellum.db(), "doomed", "x", {});
    const body = (
      await until(
        () => get("/health/workers"),
        (r) => r.body.dead_letter === 1,
      )
    ).body;
    expect(body).toMatchObject({ status: "degraded", dead_letter: 1, workers: [{ queue: "doomed", dead_letter: 1 }] });
  });

  it("is 503 when the queue cannot be read", async () => {
    t = await createTestVellum({ plugins: [health()] });
    await t.vellum.db().destroy();
    const { status, body } = await get("/health/workers");
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "unavailable", queue_depth: null, dead_letter: null });
  });
});

describe("/health/storage", () => {
  it("reports bytes used against the quota", async () => {
    t = await createTestVellum({ plugins: [health()] });
    const { status, body } = await get("/health/storage");
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "ok", warning: false, quota_bytes: 10 * 1024 ** 3, writable: true });
    expect(body.database_bytes).toBe(t.vellum.database().sizeBytes());
    expect(body.used_bytes).toBe(body.files_bytes + body.database_bytes);
    expect(body.disk.total_bytes).toBeGreaterThan(0);
    expect(body.scanned_at).toEqual(expect.any(String));
  });

  it("is 503 above 90 % of a small quota, and /health is degraded", async () => {
    t = await createTestVellum({ plugins: [health()], config: { storageQuotaBytes: 10_000 } });
    const { status, body } = await get("/health/storage");
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "full", warning: true, quota_bytes: 10_000 });
    expect(body.used_ratio).toBeGreaterThan(0.9);
    expect((await get("/health")).body).toMatchObject({ status: "degraded", components: { storage: "degraded" } });
    expect((await get("/health/ready")).status).toBe(200);
  });

  it("follows storage:changed reports between rescans: warning at 80 %, 503 above 90 %", async () => {
    const quota = 20 * 1024 * 1024;
    t = await createTestVellum({ plugins: [health()], config: { storageQuotaBytes: quota } });
    const start = (await get("/health/storage")).body;
    const media = join(t.dataDir, "media");
    await mkdir(media, { recursive: true });
    const toWarning = Math.round(0.85 * quota) - start.used_bytes;
    await writeFile(join(media, "a.webp"), Buffer.alloc(toWarning));
    await t.vellum.hooks.callHook("storage:changed", { bytes: toWarning, mount: "media" });
    const warning = await get("/health/storage");
    expect(warning.status).toBe(200);
    expect(warning.body).toMatchObject({ status: "warning", warning: true });
    const toFull = Math.round(0.1 * quota);
    await writeFile(join(media, "b.webp"), Buffer.alloc(toFull));
    await t.vellum.hooks.callHook("storage:changed", { bytes: toFull, mount: "media" });
    const full = await get("/health/storage");
    expect(full.status).toBe(503);
    expect(full.body.status).toBe("full");
    await t.vellum.hooks.callHook("storage:changed", { bytes: -toFull, mount: "media" });
    expect((await get("/health/storage")).status).toBe(200);
  });

  it("picks up files nobody reported at the next background rescan", async () => {
    t = await createTestVellum({ plugins: [health({ storage: { rescanIntervalMs: 100 } })] });
    const before = (await get("/health/storage")).body.files_bytes;
    await mkdir(join(t.dataDir, "media"), { recursive: true });
    await writeFile(join(t.dataDir, "media", "unreported.bin"), Buffer.alloc(50_000));
    const after = await until(
      () => get("/health/storage"),
      (r) => r.body.files_bytes >= before + 50_000,
    );
    expect(after.body.files_bytes).toBe(before + 50_000);
  });

  it("is unavailable, and the instance not ready, when the data dir is gone", async () => {
    t = await createTestVellum({ plugins: [health()] });
    await rm(t.dataDir, { recursive: true, force: true });
    const { status, body } = await get("/health/storage");
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "unavailable", writable: false, disk: null });
    const ready = await get("/health/ready");
    expect(ready).toMatchObject({ status: 503, body: { ready: false, checks: { storage: "unavailable" } } });
  });

  it("warns when the disk holding the data dir is fuller than the warning level", async () => {
    t = await createTestVellum({ plugins: [health({ storage: { diskWarnRatio: 0 } })] });
    const { status, body } = await get("/health/storage");
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: "warning", warning: true });
    expect(body.used_ratio).toBeLessThan(0.8);
  });
});

describe("/health/dependencies", () => {
  it("lists every subsystem with its own status, absent ones included", async () => {
    t = await createTestVellum({
      plugins: [
        health(),
        reporter("webhooks", () => ({ name: "webhooks", ok: true, detail: { receivers: 2, pending: 0 } })),
      ],
    });
    const { status, body } = await get("/health/dependencies");
    expect(status).toBe(200);
    expect(body.status).toBe("ok");
    expect(body.dependencies).toMatchObject({
      db: { status: "ok" },
      storage: { status: "ok" },
      queue: { status: "ok", queue_depth: 0, dead_letter: 0 },
      search: { status: "absent" },
      webhooks: { status: "ok", receivers: 2, pending: 0 },
      backup: { status: "absent" },
    });
  });

  it("is degraded when a reported subsystem is down", async () => {
    t = await createTestVellum({
      plugins: [
        health(),
        reporter("backup", () => ({ name: "backup", ok: false, detail: { last_error: "target missing" } })),
      ],
    });
    const { body } = await get("/health/dependencies");
    expect(body.status).toBe("degraded");
    expect(body.dependencies.backup).toEqual({ status: "unavailable", last_error: "target missing" });
  });
});

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ComponentReport, definePlugin, VellumError } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { health } from "../src/index.js";
import { component, failingQueue, held, missingIndex } from "./fixtures/plugins.js";
import { getJson } from "./http.js";

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

describe("/health/<component>", () => {
  const indexedAt = "2025-01-01T00:00:00.000Z";
  const healthyIndex = () => ({ state: "ok" as const, detail: { documents: 42, indexed_at: indexedAt, stale: false } });

  it("answers {status, state, ...detail} for a registered component, in that order", async () => {
    t = await createTestVellum({ plugins: [health(), component("search", healthyIndex, { readiness: true })] });
    const res = await t.fetch("/health/search");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).toBe(
      JSON.stringify({ status: "ok", state: "ok", documents: 42, indexed_at: indexedAt, stale: false }),
    );
  });

  it("is degraded with the reported state, and 503 only while unavailable", async () => {
    let state: "degraded" | "unavailable" = "degraded";
    t = await createTestVellum({ plugins: [health(), component("search", () => missingIndex(state))] });
    expect(await get("/health/search")).toEqual({
      status: 200,
      body: { status: "degraded", state: "degraded", documents: 0, indexed_at: null, stale: false },
    });
    state = "unavailable";
    const { status, body } = await get("/health/search");
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "degraded", state: "unavailable" });
  });

  it("keeps status and state its own when the detail carries keys of those names", async () => {
    const check = () => ({ state: "degraded" as const, detail: { status: "ok", state: "ok", lag: 3 } });
    t = await createTestVellum({ plugins: [health(), component("mirror", check)] });
    expect((await get("/health/mirror")).body).toEqual({ status: "degraded", state: "degraded", lag: 3 });
  });

  it("is unavailable when the check throws, without the error in the body", async () => {
    const check = () => {
      throw new Error("secret-internal-detail");
    };
    t = await createTestVellum({ plugins: [health(), component("mirror", check)] });
    const { status, body } = await get("/health/mirror");
    expect(status).toBe(503);
    expect(body).toEqual({ status: "degraded", state: "unavailable" });
    expect(JSON.stringify(body)).not.toContain("secret-internal-detail");
  });

  it("is unavailable when the check answers an unknown state", async () => {
    const check = () => ({ state: "fine" }) as unknown as ComponentReport;
    t = await createTestVellum({ plugins: [health(), component("mirror", check)] });
    expect(await get("/health/mirror")).toEqual({ status: 503, body: { status: "degraded", state: "unavailable" } });
  });

  it("is unavailable once the check takes longer than checkTimeoutMs", async () => {
    const slow = held();
    t = await createTestVellum({ plugins: [health({ checkTimeoutMs: 100 }), component("mirror", slow.check)] });
    const started = Date.now();
    const { status, body } = await get("/health/mirror");
    expect(Date.now() - started).toBeLessThan(2000);
    expect(status).toBe(503);
    expect(body.state).toBe("unavailable");
    slow.release();
    expect((await get("/health/mirror")).body.state).toBe("ok");
  });

  it("is 404 not_found for a name no plugin registered", async () => {
    t = await createTestVellum({ plugins: [health()] });
    const { status, body } = await get("/health/search");
    expect(status).toBe(404);
    expect(body.error).toMatchObject({ code: "not_found" });
  });

  it("is absent (200) for a name the operator expects but no plugin registered", async () => {
    t = await createTestVellum({ plugins: [health({ expect: ["search"] })] });
    expect(await get("/health/search")).toEqual({ status: 200, body: { status: "absent", state: "absent" } });
  });

  it("leaves the plugin's own routes in front of registered components", async () => {
    t = await createTestVellum({ plugins: [health(), component("ai", () => ({ state: "degraded" }))] });
    expect((await get("/health/ai")).body).toEqual({ status: "disabled", features: [], endpoints: [] });
  });

  it("refuses to start when a plugin registers a name the health plugin keeps", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "vellum-health-reserved-"));
    try {
      const start = createTestVellum({ dataDir, plugins: [health(), component("ready", healthyIndex)] });
      await expect(start).rejects.toSatisfy(
        (error: unknown) =>
          VellumError.is(error) &&
          VellumError.is(error.cause, "VELLUM_HEALTH_COMPONENT_RESERVED") &&
          error.message.includes("'ready'"),
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
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
      workers: [{ queue: "unhandled", queued: 3, dead_letter: 0, worked_here: false }],
    });
  });

  it("lists every queue that has a worker, idle ones included", async () => {
    const worker = definePlugin({
      name: "worker",
      setup: (ctx) => ctx.queue("mail").process(async () => undefined),
    });
    t = await createTestVellum({ plugins: [health(), worker()] });
    expect((await get("/health/workers")).body.workers).toEqual([
      { queue: "worker:mail", queued: 0, dead_letter: 0, worked_here: true },
    ]);
  });

  it("counts jobs that exhausted their retries as dead letters", async () => {
    t = await createTestVellum({ plugins: [health({ queue: { deadLetterLimit: 0 } }), failingQueue("doomed")] });
    await t.vellum.queue().enqueue(t.vellum.db(), "doomer:doomed", "x", {});
    const body = (
      await until(
        () => get("/health/workers"),
        (r) => r.body.dead_letter === 1,
      )
    ).body;
    expect(body).toMatchObject({
      status: "degraded",
      dead_letter: 1,
      workers: [{ queue: "doomer:doomed", dead_letter: 1 }],
    });
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
    t = await createTestVellum({ plugins: [health({ storageQuotaBytes: 10_000 })] });
    const { status, body } = await get("/health/storage");
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: "full", warning: true, quota_bytes: 10_000 });
    expect(body.used_ratio).toBeGreaterThan(0.9);
    expect((await get("/health")).body).toMatchObject({ status: "degraded", components: { storage: "degraded" } });
    expect((await get("/health/ready")).status).toBe(200);
  });

  it("follows storage:changed reports between rescans: warning at 80 %, 503 above 90 %", async () => {
    const quota = 20 * 1024 * 1024;
    t = await createTestVellum({ plugins: [health({ storageQuotaBytes: quota })] });
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

  it("picks up files nobody reported, in a folder a plugin asked for, at the next background rescan", async () => {
    let folder = "";
    const owner = definePlugin({
      name: "uploader",
      setup: (ctx) => ctx.onStart(async () => void (folder = await ctx.dataFolder("uploads"))),
    });
    t = await createTestVellum({ plugins: [health({ storage: { rescanIntervalMs: 100 } }), owner()] });
    const before = (await get("/health/storage")).body.files_bytes;
    await writeFile(join(folder, "unreported.bin"), Buffer.alloc(50_000));
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
  it("lists its own checks, every registered component with its detail, and expected ones as absent", async () => {
    const receivers = () => ({ state: "ok" as const, detail: { receivers: 2, pending: 0 } });
    t = await createTestVellum({
      plugins: [health({ expect: ["search", "webhooks", "backup"] }), component("webhooks", receivers)],
    });
    const { status, body } = await get("/health/dependencies");
    expect(status).toBe(200);
    expect(body.status).toBe("ok");
    expect(body.dependencies).toEqual({
      db: { status: "ok", latency_ms: expect.any(Number), wal_size_bytes: expect.any(Number) },
      storage: { status: "ok", used_ratio: expect.any(Number), warning: false },
      queue: { status: "ok", queue_depth: 0, dead_letter: 0 },
      migrations: { status: "ok", drift: false, pending: 0 },
      search: { status: "absent" },
      webhooks: { status: "ok", receivers: 2, pending: 0 },
      backup: { status: "absent" },
    });
    expect(Object.keys(body.dependencies)).toEqual([
      "db",
      "storage",
      "queue",
      "migrations",
      "search",
      "webhooks",
      "backup",
    ]);
    expect((await get("/health")).body.status).toBe("ok");
  });

  it("shows absent only for expected names: without expect, nothing is absent", async () => {
    t = await createTestVellum({ plugins: [health()] });
    expect(Object.keys((await get("/health/dependencies")).body.dependencies)).toEqual([
      "db",
      "storage",
      "queue",
      "migrations",
    ]);
  });

  it("is degraded when a registered component is down, and shows a throwing check as unavailable", async () => {
    const down = () => ({ state: "unavailable" as const, detail: { last_error: "target missing" } });
    const broken = () => {
      throw new Error("boom");
    };
    t = await createTestVellum({
      plugins: [health(), component("archive", down), component("mirror", broken)],
    });
    const { body } = await get("/health/dependencies");
    expect(body.status).toBe("degraded");
    expect(body.dependencies.archive).toEqual({ status: "unavailable", last_error: "target missing" });
    expect(body.dependencies.mirror).toEqual({ status: "unavailable" });
  });

  it("answers within the timeout while a check hangs, the others unaffected", async () => {
    const slow = held();
    t = await createTestVellum({
      plugins: [
        health({ checkTimeoutMs: 100 }),
        component("mirror", slow.check),
        component("archive", () => ({ state: "ok" })),
      ],
    });
    const { body } = await get("/health/dependencies");
    expect(body.dependencies).toMatchObject({ mirror: { status: "unavailable" }, archive: { status: "ok" } });
    slow.release();
  });
});

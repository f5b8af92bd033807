import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { health } from "../src/index.js";
import { missingIndex, reporter, slowRoute } from "./fixtures/plugins.js";

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("/health", () => {
  it("is ok with version and uptime, and no components, when everything is healthy", async () => {
    t = await createTestVellum({ plugins: [health()], config: { version: "1.2.3" } });
    const res = await t.fetch("/health");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body).toEqual({ status: "ok", version: "1.2.3", uptime_seconds: expect.any(Number) });
    expect(body.uptime_seconds).toBeGreaterThanOrEqual(0);
  });

  it("counts uptime from the kernel's start", async () => {
    t = await createTestVellum({ plugins: [health()] });
    const before = (await (await t.fetch("/health")).json()).uptime_seconds;
    await new Promise((r) => setTimeout(r, 1100));
    const after = (await (await t.fetch("/health")).json()).uptime_seconds;
    expect(after).toBeGreaterThan(before);
  });

  it("is degraded, still 200, with components, when search reports unavailable", async () => {
    t = await createTestVellum({ plugins: [health(), reporter("search", () => missingIndex("unavailable"))] });
    const res = await t.fetch("/health");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe("degraded");
    expect(body.components).toMatchObject({ search: "unavailable", db: "ok", storage: "ok", queue: "ok" });
  });

  it("does not count a component no plugin reports (search not installed)", async () => {
    t = await createTestVellum({ plugins: [health()] });
    expect((await (await t.fetch("/health")).json()).status).toBe("ok");
    const deps = await (await t.fetch("/health/dependencies")).json();
    expect(deps.dependencies.search).toEqual({ status: "absent" });
  });

  it("is degraded with db unavailable when the database is closed, and never 500s", async () => {
    t = await createTestVellum({ plugins: [health()] });
    await t.vellum.db().destroy();
    const res = await t.fetch("/health");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe("degraded");
    expect(body.components.db).toBe("unavailable");
    for (const path of [
      "/health/db",
      "/health/ready",
      "/health/workers",
      "/health/migrations",
      "/health/dependencies",
    ]) {
      expect((await t.fetch(path)).status, path).not.toBe(500);
    }
  });
});

describe("/health/live", () => {
  it("answers { live: true }", async () => {
    t = await createTestVellum({ plugins: [health()] });
    const res = await t.fetch("/health/live");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ live: true });
  });
});

describe("/health/ready", () => {
  it("is ready when db, search and storage are fine", async () => {
    t = await createTestVellum({ plugins: [health(), reporter("search", () => ({ name: "search", ok: true }))] });
    const res = await t.fetch("/health/ready");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      ready: true,
      state: "ready",
      checks: { db: "ok", search: "ok", storage: "ok" },
    });
  });

  it("stays ready without a search plugin (search absent)", async () => {
    t = await createTestVellum({ plugins: [health()] });
    const res = await t.fetch("/health/ready");
    expect(res.status).toBe(200);
    expect((await res.json()).checks.search).toBe("absent");
  });

  it("stays ready while the search index is degraded (articles stay readable), not when search is unavailable", async () => {
    let state: "degraded" | "unavailable" = "degraded";
    t = await createTestVellum({ plugins: [health(), reporter("search", () => missingIndex(state))] });
    const degraded = await t.fetch("/health/ready");
    expect(degraded.status).toBe(200);
    expect((await degraded.json()).checks.search).toBe("degraded");
    state = "unavailable";
    const down = await t.fetch("/health/ready");
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ ready: false, checks: { search: "unavailable" } });
  });

  it("is 503 when the database is closed", async () => {
    t = await createTestVellum({ plugins: [health()] });
    await t.vellum.db().destroy();
    const res = await t.fetch("/health/ready");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ready: false, checks: { db: "unavailable" } });
  });

  it("is 503 before start-up has finished while /health/live already answers", async () => {
    t = await createTestVellum({ plugins: [health()], ready: false });
    await t.vellum.init();
    expect(t.vellum.state()).toBe("starting");
    const res = await t.fetch("/health/ready");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ready: false, state: "starting" });
    expect((await t.fetch("/health/live")).status).toBe(200);
    const overall = await (await t.fetch("/health")).json();
    expect(overall).toMatchObject({ status: "degraded", components: { service: "unavailable" } });
    await t.vellum.ready();
    expect((await t.fetch("/health/ready")).status).toBe(200);
  });

  it("is 503 while shutting down", async () => {
    const slow = slowRoute();
    t = await createTestVellum({ plugins: [health(), slow.plugin] });
    const pending = t.fetch("/api/v1/slow");
    await new Promise((r) => setTimeout(r, 20));
    const closing = t.close();
    expect(t.vellum.state()).toBe("closing");
    const res = await t.fetch("/health/ready");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ready: false, state: "closing" });
    expect((await t.fetch("/health/live")).status).toBe(200);
    slow.release();
    expect((await pending).status).toBe(200);
    await closing;
    t = undefined;
  });
});

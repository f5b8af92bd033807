import { readFileSync } from "node:fs";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { health } from "../src/index.js";
import { component, missingIndex, slowRoute } from "./fixtures/plugins.js";

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

  it("reports @vellum/core's own version when the host sets none (embedded use)", async () => {
    const core = JSON.parse(readFileSync(new URL("../../../packages/core/package.json", import.meta.url), "utf8"));
    t = await createTestVellum({ plugins: [health()] });
    expect((await (await t.fetch("/health")).json()).version).toBe(core.version);
    expect(core.version).not.toBe("0.0.0");
  });

  it("counts uptime from the kernel's start", async () => {
    t = await createTestVellum({ plugins: [health()] });
    const before = (await (await t.fetch("/health")).json()).uptime_seconds;
    await new Promise((r) => setTimeout(r, 1100));
    const after = (await (await t.fetch("/health")).json()).uptime_seconds;
    expect(after).toBeGreaterThan(before);
  });

  it("is degraded, still 200, with components, when a registered component is unavailable", async () => {
    t = await createTestVellum({
      plugins: [health({ expect: ["backup"] }), component("search", () => missingIndex("unavailable"))],
    });
    const res = await t.fetch("/health");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe("degraded");
    expect(body.components).toEqual({
      db: "ok",
      storage: "ok",
      queue: "ok",
      migrations: "ok",
      backup: "absent",
      search: "unavailable",
    });
  });

  it("does not count an expected component that no plugin registers", async () => {
    t = await createTestVellum({ plugins: [health({ expect: ["search"] })] });
    expect(await (await t.fetch("/health")).json()).toEqual({
      status: "ok",
      version: expect.any(String),
      uptime_seconds: expect.any(Number),
    });
    const deps = await (await t.fetch("/health/dependencies")).json();
    expect(deps).toMatchObject({ status: "ok", dependencies: { search: { status: "absent" } } });
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
  it("is ready when db, storage and the readiness components are fine, in the body of today", async () => {
    t = await createTestVellum({
      plugins: [
        component("search", () => ({ state: "ok" }), { readiness: true }),
        health(),
        component("mirror", () => ({ state: "unavailable" })),
      ],
    });
    const res = await t.fetch("/health/ready");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(
      JSON.stringify({ ready: true, state: "ready", checks: { db: "ok", search: "ok", storage: "ok" } }),
    );
  });

  it("checks only db and storage when no component counts for readiness", async () => {
    t = await createTestVellum({ plugins: [health({ expect: ["search"] })] });
    const res = await t.fetch("/health/ready");
    expect(res.status).toBe(200);
    expect((await res.json()).checks).toEqual({ db: "ok", storage: "ok" });
  });

  it("is not ready while a readiness component's check throws", async () => {
    const broken = () => {
      throw new Error("engine gone");
    };
    t = await createTestVellum({ plugins: [health(), component("index", broken, { readiness: true })] });
    const res = await t.fetch("/health/ready");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ ready: false, checks: { index: "unavailable" } });
  });

  it("stays ready while the search index is degraded (articles stay readable), not when search is unavailable", async () => {
    let state: "degraded" | "unavailable" = "degraded";
    t = await createTestVellum({
      plugins: [health(), component("search", () => missingIndex(state), { readiness: true })],
    });
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

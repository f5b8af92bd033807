import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConsola } from "consola";
import { afterEach, describe, expect, it } from "vitest";
import { createVellum, definePlugin, type Vellum, VellumError } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";

const dirs: string[] = [];
const instances: Array<Vellum | TestVellum> = [];
afterEach(async () => {
  for (const i of instances.splice(0)) await i.close().catch(() => undefined);
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function bare(plugins: Parameters<typeof createVellum>[0]["plugins"], extra = {}): Promise<Vellum> {
  const dataDir = await mkdtemp(join(tmpdir(), "vellum-lifecycle-"));
  dirs.push(dataDir);
  const vellum = createVellum({ dataDir, plugins, logger: createConsola({ level: 0 }), ...extra });
  instances.push(vellum);
  return vellum;
}

function recorder(log: string[], name: string, dependsOn: string[] = []) {
  return definePlugin({
    name,
    dependsOn,
    setup(ctx) {
      log.push(`setup:${name}`);
      ctx.onStart(() => void log.push(`start:${name}`));
      ctx.onReady(() => void log.push(`ready:${name}`));
      ctx.onPreClose(() => void log.push(`preClose:${name}`));
      ctx.onClose(() => void log.push(`close:${name}`));
    },
  })();
}

describe("lifecycle", () => {
  it("runs init → start → ready in dependency order and closes in reverse", async () => {
    const log: string[] = [];
    const vellum = await bare([recorder(log, "b", ["a"]), recorder(log, "a")]);
    await vellum.ready();
    expect(vellum.state()).toBe("ready");
    await vellum.close();
    expect(vellum.state()).toBe("closed");
    expect(log).toEqual([
      "setup:a",
      "setup:b",
      "start:a",
      "start:b",
      "ready:a",
      "ready:b",
      "preClose:b",
      "preClose:a",
      "close:b",
      "close:a",
    ]);
  });

  it("answers 503 service_unavailable before ready and after close", async () => {
    const vellum = await bare([]);
    const before = await vellum.fetch(new Request("http://x/docs/api/errors"));
    expect(before.status).toBe(503);
    expect((await before.json()).error.code).toBe("service_unavailable");
    await vellum.ready();
    expect((await vellum.fetch(new Request("http://x/docs/api/errors"))).status).toBe(200);
    await vellum.close();
    expect((await vellum.fetch(new Request("http://x/docs/api/errors"))).status).toBe(503);
  });

  it("stops the start when a plugin's setup fails, attributing the error", async () => {
    const log: string[] = [];
    const broken = definePlugin({
      name: "broken",
      setup() {
        throw new Error("cannot reach the thing");
      },
    });
    const vellum = await bare([recorder(log, "a"), broken(), recorder(log, "c")]);
    const error = await vellum.ready().catch((e: unknown) => e);
    expect(VellumError.is(error, "VELLUM_PLUGIN_SETUP_FAILED")).toBe(true);
    expect((error as Error).message).toContain("'broken'");
    expect((error as Error).message).toContain("cannot reach the thing");
    // "c" is never set up; "a" is cleaned up through its close callbacks.
    expect(log).toEqual(["setup:a", "preClose:a", "close:a"]);
    expect(vellum.state()).toBe("closed");
  });

  it("times out a setup that never finishes", async () => {
    const stuck = definePlugin({ name: "stuck", setup: () => new Promise(() => undefined) });
    const vellum = await bare([stuck()], { setupTimeoutMs: 50 });
    const error = await vellum.ready().catch((e: unknown) => e);
    expect(VellumError.is(error, "VELLUM_PLUGIN_SETUP_TIMEOUT")).toBe(true);
  });

  it("attributes a failing start callback to its plugin", async () => {
    const failing = definePlugin({
      name: "flaky",
      setup(ctx) {
        ctx.onStart(() => {
          throw new Error("port in use");
        });
      },
    });
    const vellum = await bare([failing()]);
    const error = await vellum.ready().catch((e: unknown) => e);
    expect(VellumError.is(error, "VELLUM_PLUGIN_HOOK_FAILED")).toBe(true);
    expect((error as Error).message).toMatch(/'flaky' failed in start: port in use/);
  });

  it("resolves plugin options from inline, config and defaults, frozen", async () => {
    let seen: unknown;
    const p = definePlugin<{ a: number; b: number; c: number }>({
      name: "opts",
      defaults: { a: 1, b: 1, c: 1 },
      setup(ctx) {
        seen = ctx.options;
      },
    });
    const vellum = await bare([p({ a: 3 })], { pluginOptions: { opts: { a: 2, b: 2 } } });
    await vellum.ready();
    expect(seen).toEqual({ a: 3, b: 2, c: 1 });
    expect(Object.isFrozen(seen)).toBe(true);
  });

  it("shares services only with plugins that depend on the provider", async () => {
    const fake = { count: async () => 7 } as never;
    const provider = definePlugin({ name: "articles", setup: (ctx) => ctx.provide("articles", fake) });
    let injected: unknown;
    const consumer = definePlugin({
      name: "consumer",
      dependsOn: ["articles"],
      setup: (ctx) => {
        injected = ctx.inject("articles");
      },
    });
    const stranger = definePlugin({
      name: "stranger",
      optionalDependsOn: [],
      setup: (ctx) => void ctx.inject("articles"),
    });
    const ok = await bare([provider(), consumer()]);
    await ok.ready();
    expect(injected).toBe(fake);
    expect(ok.service("articles")).toBe(fake);
    const bad = await bare([provider(), stranger()]);
    const error = await bad.ready().catch((e: unknown) => e);
    expect(VellumError.is(error, "VELLUM_SERVICE_UNDECLARED")).toBe(true);
    expect((error as VellumError).plugin).toBe("stranger");
  });

  it("refuses a route registered twice", async () => {
    const one = definePlugin({ name: "one", setup: (ctx) => ctx.router.get("/x", () => "a") });
    const two = definePlugin({ name: "two", setup: (ctx) => ctx.router.get("/x", () => "b") });
    const vellum = await bare([one(), two()]);
    const error = await vellum.ready().catch((e: unknown) => e);
    expect(VellumError.is(error, "VELLUM_ROUTE_DUPLICATE")).toBe(true);
    expect((error as Error).message).toContain("'one' and 'two'");
  });

  it("runs scheduled jobs only between start and close", async () => {
    let runs = 0;
    const p = definePlugin({
      name: "ticker",
      setup: (ctx) => ctx.schedule("tick", { everyMs: 5, runImmediately: true }, () => void runs++),
    });
    const t = await createTestVellum({ plugins: [p()], ready: false });
    instances.push(t);
    await t.vellum.init();
    await new Promise((r) => setTimeout(r, 30));
    expect(runs).toBe(0);
    await t.vellum.ready();
    await new Promise((r) => setTimeout(r, 50));
    expect(runs).toBeGreaterThan(1);
    await t.close();
    const after = runs;
    await new Promise((r) => setTimeout(r, 30));
    expect(runs).toBe(after);
  });
});

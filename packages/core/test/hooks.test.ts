import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ArticleRecord, createVellum, definePlugin, type HookName, type VellumHooks } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { notesPlugin } from "./fixtures/notes-plugin.js";
import { hookFailures, noteCount, postNote } from "./helpers/notes.js";

declare module "../src/hooks/types.js" {
  interface VellumHooks {
    /** Test hooks of the `relay` plugin below, one of each kind a plugin may declare besides `commit`. */
    "relay:serial": (payload: { calls: string[] }) => void | Promise<void>;
    "relay:isolated": (payload: { calls: string[] }) => void | Promise<void>;
  }
}

let t: TestVellum | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const article: ArticleRecord = {
  id: "x",
  title: "",
  slug: "x",
  content: "",
  tags: [],
  created_at: "",
  updated_at: "",
};

/** A plugin whose setup subscribes `fn` to `name` (typed loosely: some tests subscribe to names nobody declares). */
function subscriber(name: string, hook: string, fn: () => void, options?: { optional?: boolean }) {
  return definePlugin({
    name,
    setup: (ctx) => void ctx.hooks.hook(hook as HookName, fn as VellumHooks[HookName], options),
  })();
}

/** An instance that has not started yet; `ready()` is the test's to call. */
async function unstarted(plugins: Parameters<typeof createTestVellum>[0] = {}): Promise<TestVellum> {
  t = await createTestVellum({ ...plugins, ready: false });
  return t;
}

describe("hook declarations", () => {
  it("refuse at setup a subscription to a hook nobody declares, naming the closest declared hook", async () => {
    const typo = subscriber("typo", "article:afterCreated", () => undefined);
    const { vellum } = await unstarted({ plugins: [notesPlugin(), typo] });
    const failure = vellum.ready();
    await expect(failure).rejects.toMatchObject({
      name: "VellumError",
      code: "VELLUM_HOOK_UNDECLARED",
      plugin: "typo",
    });
    await expect(failure).rejects.toThrow(
      "plugin 'typo' subscribes to hook 'article:afterCreated', which no installed plugin declares; did you mean 'article:afterCreate'?",
    );
  });

  it("refuse a shared content hook when the plugin that declares it is not installed", async () => {
    const listener = subscriber("listener", "article:afterCreate", () => undefined);
    const { vellum } = await unstarted({ plugins: [listener] });
    await expect(vellum.ready()).rejects.toMatchObject({ code: "VELLUM_HOOK_UNDECLARED", plugin: "listener" });
  });

  it("subscribe `optional` hooks only when an installed plugin declares them, and do nothing otherwise", async () => {
    const calls: string[] = [];
    const plugins = () => [
      subscriber("listener", "article:afterCreate", () => void calls.push("afterCreate"), { optional: true }),
      subscriber("typo", "article:afterCreated", () => void calls.push("afterCreated"), { optional: true }),
    ];
    t = await createTestVellum({ plugins: plugins() });
    await t.vellum.hooks.callHook("article:afterCreate", { article, cacheTags: [], context: {} });
    expect(calls).toEqual([]);
    await t.close();

    t = await createTestVellum({ plugins: [notesPlugin(), ...plugins()] });
    expect((await postNote(t, "n1")).status).toBe(201);
    expect(calls).toEqual(["afterCreate"]);
  });

  it("refuse two owners of one hook, a plugin's or the kernel's", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "vellum-hooks-"));
    dirs.push(dataDir);
    const impostor = (hooks: Record<string, "serial">) => definePlugin({ name: "impostor", hooks, setup: () => {} })();
    expect(() =>
      createVellum({ dataDir, plugins: [notesPlugin(), impostor({ "article:afterCreate": "serial" })] }),
    ).toThrow(
      expect.objectContaining({
        code: "VELLUM_HOOK_DUPLICATE",
        message: "hook 'article:afterCreate' is declared by both 'notes' and 'impostor'",
      }),
    );
    expect(() => createVellum({ dataDir, plugins: [impostor({ "vellum:error": "serial" })] })).toThrow(
      "hook 'vellum:error' is declared by both 'core' and 'impostor'",
    );
  });

  it("refuse to call a commit hook outside a write", async () => {
    t = await createTestVellum({ plugins: [notesPlugin()] });
    const { hooks } = t.vellum;
    await t.vellum
      .db()
      .transaction()
      .execute(async (trx) => {
        const call = hooks.callHook("article:commit", { op: "create", article, cacheTags: [], trx, context: {} });
        await expect(call).rejects.toMatchObject({ code: "VELLUM_HOOK_COMMIT_CALL" });
      });
  });

  it("run a hook as its declaring plugin says: serial stops at a throw, isolated runs all and reports", async () => {
    const relay = definePlugin({
      name: "relay",
      hooks: { "relay:serial": "serial", "relay:isolated": "isolated" },
      setup: () => {},
    });
    const both = (name: string, fn: (payload: { calls: string[] }) => void) =>
      definePlugin({
        name,
        setup(ctx) {
          ctx.hooks.hook("relay:serial", fn);
          ctx.hooks.hook("relay:isolated", fn);
        },
      })();
    const failing = both("failing", ({ calls }) => {
      calls.push("failing");
      throw new Error("subscriber down");
    });
    const healthy = both("healthy", ({ calls }) => void calls.push("healthy"));
    t = await createTestVellum({ plugins: [relay(), failing, healthy] });

    const serial: string[] = [];
    await expect(t.vellum.hooks.callHook("relay:serial", { calls: serial })).rejects.toThrow("subscriber down");
    expect(serial).toEqual(["failing"]);
    expect(t.errors).toEqual([]);

    const isolated: string[] = [];
    await t.vellum.hooks.callHook("relay:isolated", { calls: isolated });
    expect(isolated).toEqual(["failing", "healthy"]);
    expect(t.errors).toEqual([
      expect.objectContaining({ plugin: "failing", hook: "relay:isolated", error: new Error("subscriber down") }),
    ]);
  });

  it("run serial subscribers in order, each after the one before settles, sync or async", async () => {
    const relay = definePlugin({ name: "relay", hooks: { "relay:serial": "serial" }, setup: () => {} });
    const subscriber = (name: string, fn: (payload: { calls: string[] }) => void | Promise<void>) =>
      definePlugin({ name, setup: (ctx) => void ctx.hooks.hook("relay:serial", fn) })();
    const slow = subscriber("slow", async ({ calls }) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      calls.push("slow");
    });
    const sync = (name: string) => subscriber(name, ({ calls }) => void calls.push(name));
    const late = subscriber("late", async ({ calls }) => {
      await Promise.resolve();
      calls.push("late");
      if (calls[0] === "first") throw new Error("late refuses");
    });
    t = await createTestVellum({ plugins: [relay(), sync("sync"), slow, sync("again"), late] });

    const calls: string[] = [];
    await t.vellum.hooks.callHook("relay:serial", { calls });
    expect(calls).toEqual(["sync", "slow", "again", "late"]);
    const more = ["first"];
    await expect(t.vellum.hooks.callHook("relay:serial", { calls: more })).rejects.toThrow("late refuses");
    expect(more).toEqual(["first", "sync", "slow", "again", "late"]);
  });
});

describe("after-commit hooks", () => {
  it("isolate a failing subscriber: the request succeeds and the others still run", async () => {
    const calls: string[] = [];
    const failing = subscriber("failing", "article:afterCreate", () => {
      calls.push("failing");
      throw new Error("webhook receiver down");
    });
    const healthy = definePlugin({
      name: "healthy",
      setup(ctx) {
        ctx.hooks.hook("article:afterCreate", ({ article }) => void calls.push(`healthy:${article.id}`));
      },
    });
    t = await createTestVellum({ plugins: [notesPlugin(), failing, healthy()] });
    const res = await postNote(t, "n2");
    expect(res.status).toBe(201);
    expect(calls).toEqual(["failing", "healthy:n2"]);
    expect(await noteCount(t)).toBe(1);
    expect(t.errors).toHaveLength(1);
    expect(t.errors[0]).toMatchObject({ plugin: "failing", hook: "article:afterCreate" });
    expect(await hookFailures(t, "failing", "article:afterCreate")).toBe(1);
  });

  it("unregisters every hook on close", async () => {
    let calls = 0;
    t = await createTestVellum({
      plugins: [notesPlugin(), subscriber("counter", "article:afterCreate", () => void calls++)],
    });
    const hooks = t.vellum.hooks;
    await hooks.callHook("article:afterCreate", { article, cacheTags: [], context: {} });
    expect(calls).toBe(1);
    await t.close();
    t = undefined;
    await hooks.callHook("article:afterCreate", { article, cacheTags: [], context: {} });
    expect(calls).toBe(1);
  });
});

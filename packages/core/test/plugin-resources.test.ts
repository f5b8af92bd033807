import { mkdtemp, readFile, rm, stat, writeFile, chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import memoryDriver from "unstorage/drivers/memory";
import { afterEach, describe, expect, it } from "vitest";
import { definePlugin, type VellumPluginContext } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";

const instances: TestVellum[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const instance of instances.splice(0)) await instance.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A plugin that does nothing but hand its context to the test. */
function contextOf(name: string, contexts: Map<string, VellumPluginContext>) {
  return definePlugin({ name, setup: (ctx) => void contexts.set(name, ctx) })();
}

/** Starts an instance of `names`' plugins on `dataDir` (kept across restarts) and returns their contexts. */
async function start(names: string[], dataDir: string, config: Parameters<typeof createTestVellum>[0] = {}) {
  const contexts = new Map<string, VellumPluginContext>();
  const t = await createTestVellum({ ...config, plugins: names.map((name) => contextOf(name, contexts)), dataDir });
  instances.push(t);
  const ctx = (name: string) => contexts.get(name) as VellumPluginContext;
  return { t, ctx };
}

async function stop(t: TestVellum): Promise<void> {
  instances.splice(instances.indexOf(t), 1);
  await t.close();
}

async function newDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "vellum-resources-"));
  dirs.push(dir);
  return dir;
}

const mode = async (path: string) => (await stat(path)).mode & 0o777;
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe("ctx.secret", () => {
  it("creates a secret readable by the owner only, and returns it again after a restart", async () => {
    const dataDir = await newDataDir();
    const first = await start(["vault", "other"], dataDir);
    const secret = await first.ctx("vault").secret("signing");
    expect(secret.length).toBeGreaterThanOrEqual(32);
    const path = join(dataDir, "settings", "vault-signing");
    expect(await mode(path)).toBe(0o600);
    expect((await readFile(path, "utf8")).trim()).toBe(secret);
    expect(await first.ctx("vault").secret("signing")).toBe(secret);
    // Another plugin's secret of the same name is its own.
    expect(await first.ctx("other").secret("signing")).not.toBe(secret);
    await stop(first.t);

    const again = await start(["vault"], dataDir);
    expect(await again.ctx("vault").secret("signing")).toBe(secret);
  });

  it("tightens a secret file that others can read, and replaces one too short to be a secret", async () => {
    const dataDir = await newDataDir();
    const first = await start(["vault"], dataDir);
    const secret = await first.ctx("vault").secret("signing");
    const path = join(dataDir, "settings", "vault-signing");
    await chmod(path, 0o644);
    expect(await first.ctx("vault").secret("signing")).toBe(secret);
    expect(await mode(path)).toBe(0o600);

    await writeFile(path, "short");
    const replaced = await first.ctx("vault").secret("signing");
    expect(replaced).not.toBe("short");
    expect(replaced.length).toBeGreaterThanOrEqual(32);
    expect(await mode(path)).toBe(0o600);
  });
});

describe("ctx.dataFolder", () => {
  it("creates <dataDir>/<name> with mode 0700 on the first call only; the kernel creates no such folders", async () => {
    const dataDir = await newDataDir();
    const { ctx } = await start(["archive"], dataDir);
    for (const folder of ["archive", "media", "mailboxes", "pgp", "storage"]) {
      expect(await exists(join(dataDir, folder))).toBe(false);
    }
    const path = await ctx("archive").dataFolder("archive");
    expect(path).toBe(join(dataDir, "archive"));
    expect(await mode(path)).toBe(0o700);
    await writeFile(join(path, "kept"), "x");
    expect(await ctx("archive").dataFolder("archive")).toBe(path);
    expect(await readFile(join(path, "kept"), "utf8")).toBe("x");
  });

  it("refuses names that are not one plain folder", async () => {
    const { ctx } = await start(["archive"], await newDataDir());
    for (const name of ["../outside", "a/b", "Archive", "", ".hidden"]) {
      await expect(ctx("archive").dataFolder(name)).rejects.toThrow("is not a data folder name");
    }
  });
});

describe("ctx.storage", () => {
  it("gives each plugin its own durable namespace: no plugin sees another's keys", async () => {
    const dataDir = await newDataDir();
    const first = await start(["alpha", "beta"], dataDir);
    const alpha = first.ctx("alpha").storage;
    const beta = first.ctx("beta").storage;
    await alpha.setItem("shared-key", "alpha's value");
    await beta.setItem("shared-key", "beta's value");
    await beta.setItem("beta-only", "b");
    expect(await alpha.getItem("shared-key")).toBe("alpha's value");
    expect(await beta.getItem("shared-key")).toBe("beta's value");
    expect(await alpha.getKeys()).toEqual(["shared-key"]);
    expect((await beta.getKeys()).sort()).toEqual(["beta-only", "shared-key"]);
    expect(await alpha.hasItem("beta-only")).toBe(false);
    // A key cannot climb out of the namespace.
    await expect(alpha.getItem("../beta/beta-only").catch(() => null)).resolves.toBeNull();
    expect(await readFile(join(dataDir, "storage", "alpha", "shared-key"), "utf8")).toBe("alpha's value");
    await stop(first.t);

    const again = await start(["alpha", "beta"], dataDir);
    expect(await again.ctx("alpha").storage.getItem("shared-key")).toBe("alpha's value");
    expect(await again.ctx("beta").storage.getItem("shared-key")).toBe("beta's value");
  });

  it("uses the driver the host configured for a plugin instead of files", async () => {
    const dataDir = await newDataDir();
    const { ctx } = await start(["alpha", "beta"], dataDir, { config: { storage: { alpha: memoryDriver() } } });
    await ctx("alpha").storage.setItem("k", "in memory");
    await ctx("beta").storage.setItem("k", "on disk");
    expect(await ctx("alpha").storage.getItem("k")).toBe("in memory");
    expect(await exists(join(dataDir, "storage", "alpha"))).toBe(false);
    expect(await readFile(join(dataDir, "storage", "beta", "k"), "utf8")).toBe("on disk");
  });
});

describe("ctx.queue", () => {
  it("names a plugin's queues after it, scopes their jobs to them, and lists them to the kernel", async () => {
    const { t, ctx } = await start(["mailer"], await newDataDir());
    const own = ctx("mailer").queue();
    const digest = ctx("mailer").queue("digest");
    expect([own.name, digest.name, ctx("mailer").queue("mailer").name]).toEqual(["mailer", "mailer:digest", "mailer"]);
    const job = await digest.enqueue(t.vellum.db(), "send", { to: "reader" }, { key: "reader" });
    expect(job).toMatchObject({ queue: "mailer:digest", key: "reader", type: "send", status: "queued" });
    expect(await digest.get(job.id)).toMatchObject({ id: job.id, payload: { to: "reader" } });
    expect(await own.get(job.id)).toBeUndefined();
    expect(await ctx("mailer").kernel.jobs.stats()).toEqual([{ queue: "mailer:digest", queued: 1, failed: 0 }]);
    expect(ctx("mailer").kernel.jobs.queues()).toEqual([]);
  });
});

describe("ctx.healthComponent", () => {
  it("registers a plugin's components for the kernel to list, each name once", async () => {
    const { ctx } = await start(["index", "other"], await newDataDir());
    const check = () => ({ state: "ok" as const, detail: { documents: 3 } });
    ctx("index").healthComponent({ name: "index", readiness: true, check });
    expect(ctx("other").kernel.components()).toEqual([{ name: "index", readiness: true, check, plugin: "index" }]);
    expect(() => ctx("other").healthComponent({ name: "index", check })).toThrow(
      expect.objectContaining({
        code: "VELLUM_HEALTH_COMPONENT_DUPLICATE",
        message: "health component 'index' is registered by both 'index' and 'other'",
      }),
    );
  });
});

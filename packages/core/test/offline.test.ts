import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createConsola } from "consola";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CommandIO,
  createVellum,
  declaredCommands,
  definePlugin,
  type PluginOfflineContext,
  prepareDataDir,
  setting,
  VellumError,
} from "../src/index.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A data dir path inside a fresh temp dir; the data dir itself does not exist yet. */
async function freshDataDir(): Promise<string> {
  const parent = await mkdtemp(join(tmpdir(), "vellum-offline-"));
  dirs.push(parent);
  return join(parent, "data");
}

const io: CommandIO = {
  options: { at: "now" },
  positionals: [],
  interactive: false,
  print: () => undefined,
  progress: () => undefined,
};

interface Options {
  source: string;
}

const declarations = {
  source: setting.string({ env: "OFFLINE_SOURCE", description: "where from", default: "nowhere" }),
};

describe("prepare: before anything opens the data dir", () => {
  it("runs before the data dir and the database exist, with the plugin's effective options", async () => {
    const dataDir = await freshDataDir();
    const seen: Array<{ exists: boolean; ctx: PluginOfflineContext<Options> }> = [];
    const plugin = definePlugin<Options>({
      name: "restorer",
      settings: declarations,
      async prepare(ctx) {
        seen.push({ exists: existsSync(ctx.dataDir), ctx });
        await mkdir(join(ctx.dataDir, "media"), { recursive: true });
        await writeFile(join(ctx.dataDir, "media", "restored.txt"), "from the backup");
      },
      setup: () => undefined,
    });
    const vellum = createVellum({ logLevel: 0, dataDir, plugins: [plugin({ source: "archive" })] });
    try {
      await vellum.ready();
      expect(seen).toHaveLength(1);
      expect(seen[0]?.exists).toBe(false);
      expect(seen[0]?.ctx.options.source).toBe("archive");
      expect(seen[0]?.ctx.databasePath).toBe(join(dataDir, "db", "vellum.sqlite"));
      expect(existsSync(join(dataDir, "media", "restored.txt"))).toBe(true);
    } finally {
      await vellum.close();
    }
  });

  it("stops the start when it throws: nothing is opened or created", async () => {
    const dataDir = await freshDataDir();
    const plugin = definePlugin({
      name: "refuser",
      prepare: () => Promise.reject(new Error("the archive is damaged")),
      setup: () => undefined,
    });
    const vellum = createVellum({ logLevel: 0, dataDir, plugins: [plugin()] });
    const error = await vellum.ready().catch((e: unknown) => e);
    expect(VellumError.is(error) && error.code).toBe("VELLUM_PLUGIN_SETUP_FAILED");
    expect((error as Error).message).toContain("prepare: the archive is damaged");
    expect(existsSync(dataDir)).toBe(false);
  });

  it("runs once per data dir in a process, however many instances start on it", async () => {
    const dataDir = await freshDataDir();
    let runs = 0;
    const plugin = definePlugin({ name: "counter", prepare: () => void runs++, setup: () => undefined })();
    await prepareDataDir([plugin], { dataDir }, createConsola({ level: -999 }));
    for (let i = 0; i < 2; i++) {
      const vellum = createVellum({ logLevel: 0, dataDir, plugins: [plugin] });
      await vellum.ready();
      await vellum.close();
    }
    expect(runs).toBe(1);
  });
});

describe("offline commands (declared with run)", () => {
  const tool = definePlugin<Options>({
    name: "tool",
    settings: declarations,
    commands: {
      "tool check": {
        description: "checks files without starting",
        run: async (command, ctx) => {
          command.print(`${ctx.name} ${ctx.options.source} ${String(command.options.at)} ${existsSync(ctx.dataDir)}`);
          return 3;
        },
      },
    },
    setup: () => undefined,
  });

  it("are declared as offline and run without init: no data dir, no database", async () => {
    const dataDir = await freshDataDir();
    expect(declaredCommands([tool()])).toEqual([
      expect.objectContaining({ name: "tool check", offline: true, plugin: "tool" }),
    ]);
    const printed: string[] = [];
    const vellum = createVellum({ logLevel: 0, dataDir, plugins: [tool({ source: "file" })] });
    const code = await vellum.runCommand("tool check", { ...io, print: (line) => void printed.push(line) });
    expect(code).toBe(3);
    expect(printed).toEqual(["tool file now false"]);
    expect(vellum.state()).toBe("created");
    expect(existsSync(dataDir)).toBe(false);
  });

  it("cannot also be bound in setup", async () => {
    const dataDir = await freshDataDir();
    const binder = definePlugin({
      name: "binder",
      commands: { twice: { description: "declared offline", run: async () => 0 } },
      setup: (ctx) => ctx.command("twice", async () => 0),
    });
    const vellum = createVellum({ logLevel: 0, dataDir, plugins: [binder()] });
    await expect(vellum.ready()).rejects.toThrow("declares it with 'run' (offline)");
  });
});

import { isAbsolute, join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { definePlugin, readSettingsFromEnv, setting, type VellumConfig } from "../src/index.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";

interface TunedOptions {
  batchSize: number;
  label: string;
  token: string;
  exportDir: string;
  maxBytes: number;
  origins: string[];
}

const TUNED_SETTINGS = {
  batchSize: setting.integer({ env: "TUNED_BATCH_SIZE", description: "Jobs per batch", default: 16, min: 1, max: 100 }),
  label: setting.string({ description: "Shown in logs (no variable)", default: "tuned" }),
  token: setting.string({ env: "TUNED_TOKEN", description: "Signing token", secret: true, minLength: 32 }),
  exportDir: setting.string({ env: "TUNED_EXPORT_DIR", description: "Where exports go", default: "exports" }),
  maxBytes: setting.amount({ env: "TUNED_MAX_GB", description: "Export cap", unit: "GB", scale: 1024 ** 3, max: 100 }),
  origins: setting.list({ env: "TUNED_ORIGINS", description: "Allowed origins", default: ["https://a.example"] }),
};

/** A plugin with declared settings; it hands its effective options to the test. */
function tuned(seen: Array<Readonly<TunedOptions>>, inline: Partial<TunedOptions> = {}) {
  return definePlugin<TunedOptions>({
    name: "tuned",
    settings: TUNED_SETTINGS,
    defaults: { label: "plain default, overridden by the declared one" },
    checkSettings(options, { dataDir }) {
      const target = join(dataDir, options.exportDir);
      const inside = !isAbsolute(options.exportDir) && !relative(dataDir, target).startsWith("..");
      return inside ? [] : [{ setting: "exportDir", message: "must be a folder inside the data directory" }];
    },
    setup: (ctx) => void seen.push(ctx.options),
  })(inline);
}

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Boots `tuned` with `pluginOptions.tuned` and inline options; resolves to how `ready()` ended. */
async function boot(pluginOptions: Partial<TunedOptions>, inline: Partial<TunedOptions> = {}) {
  const seen: Array<Readonly<TunedOptions>> = [];
  const config: Partial<VellumConfig> = { pluginOptions: { tuned: pluginOptions } };
  t = await createTestVellum({ plugins: [tuned(seen, inline)], config, ready: false });
  const error = await t.vellum.ready().then(
    () => undefined,
    (reason: unknown) => reason,
  );
  return { seen, error };
}

describe("declared settings at setup", () => {
  it("merge the declared defaults under the options the host set", async () => {
    const { seen, error } = await boot({ batchSize: 40 });
    expect(error).toBeUndefined();
    expect(seen).toEqual([{ batchSize: 40, label: "tuned", exportDir: "exports", origins: ["https://a.example"] }]);
    expect(Object.isFrozen(seen[0])).toBe(true);
  });

  it("let a list from a higher layer replace a lower one instead of joining them", async () => {
    const fromConfig = await boot({ origins: ["https://b.example"] });
    expect(fromConfig.seen[0]?.origins).toEqual(["https://b.example"]);
    await t?.close();
    const inline = await boot({ origins: ["https://b.example"] }, { origins: ["https://c.example"] });
    expect(inline.seen[0]?.origins).toEqual(["https://c.example"]);
  });

  it("fail setup with VELLUM_CONFIG_INVALID naming the setting's variable", async () => {
    const { seen, error } = await boot({ batchSize: 0 });
    expect(error).toMatchObject({
      name: "VellumError",
      code: "VELLUM_CONFIG_INVALID",
      plugin: "tuned",
      message: "invalid configuration at TUNED_BATCH_SIZE: expected a whole number from 1 to 100",
    });
    expect(seen).toEqual([]);
    expect(t?.vellum.state()).toBe("closed");
  });

  it("check inline options too, and name a setting without a variable by its option path", async () => {
    expect((await boot({}, { batchSize: 2.5 })).error).toMatchObject({
      code: "VELLUM_CONFIG_INVALID",
      message: expect.stringContaining("at TUNED_BATCH_SIZE:"),
    });
    await t?.close();
    expect((await boot({ label: "" })).error).toMatchObject({
      code: "VELLUM_CONFIG_INVALID",
      message: "invalid configuration at pluginOptions.tuned.label: a value is required",
    });
  });

  it("never repeat a secret setting's value in the problem", async () => {
    const { error } = await boot({ token: "hunter2-but-too-short" });
    expect(error).toMatchObject({ code: "VELLUM_CONFIG_INVALID", message: expect.stringContaining("TUNED_TOKEN") });
    expect((error as Error).message).not.toContain("hunter2");
  });

  it("run the plugin's rules across settings, with the data dir, naming the variable", async () => {
    const { error } = await boot({ exportDir: "../elsewhere" });
    expect(error).toMatchObject({
      code: "VELLUM_CONFIG_INVALID",
      message: "invalid configuration at TUNED_EXPORT_DIR: must be a folder inside the data directory",
    });
  });
});

describe("reading declared settings from the environment", () => {
  it("parses each declared variable and names the variable of each problem", () => {
    const env = {
      TUNED_BATCH_SIZE: " 32 ",
      TUNED_MAX_GB: "1.5",
      TUNED_EXPORT_DIR: "",
      TUNED_TOKEN: "x".repeat(40),
      UNRELATED: "ignored",
    };
    expect(readSettingsFromEnv(TUNED_SETTINGS, env)).toEqual({
      options: { batchSize: 32, maxBytes: 1.5 * 1024 ** 3, token: "x".repeat(40) },
      problems: [],
    });
    const { options, problems } = readSettingsFromEnv(TUNED_SETTINGS, {
      TUNED_BATCH_SIZE: "many",
      TUNED_MAX_GB: "0",
      TUNED_TOKEN: "short-secret",
    });
    expect(options).toEqual({});
    expect(problems).toEqual([
      { setting: "batchSize", variable: "TUNED_BATCH_SIZE", message: "'many' is not a whole number from 1 to 100" },
      { setting: "token", variable: "TUNED_TOKEN", message: "shorter than 32 characters" },
      { setting: "maxBytes", variable: "TUNED_MAX_GB", message: "0 is out of range (more than 0, at most 100 GB)" },
    ]);
  });
});

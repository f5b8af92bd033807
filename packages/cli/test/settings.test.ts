import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { VellumServer } from "@vellum/core/node";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../src/index.js";
import { greeter } from "./fixtures/greeter.js";
import { removeTempDirs, tempDir, writeConfigFile } from "./support.js";

// Declared settings end to end, in-process: the real kernel and a fixture plugin that declares its settings;
// only the process's stdout/stderr are intercepted.

const API_KEY = "k".repeat(32);
const TOKEN = "greeter-token-0123456789";
const SHORT_TOKEN = "short-token";

let out: string[];
let err: string[];
let servers: VellumServer[];

beforeEach(() => {
  out = [];
  err = [];
  servers = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => out.push(String(chunk)) > 0);
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => err.push(String(chunk)) > 0);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(servers.map((server) => server.close()));
  removeTempDirs();
});

const lines = (chunks: string[]) => chunks.join("").split("\n").slice(0, -1);
const stdout = () => lines(out);
const stderr = () => lines(err);

async function run(argv: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; prefixes?: string[] } = {}) {
  const cwd = options.cwd ?? tempDir();
  const code = await runCli({
    argv,
    env: { SERVICE_LOG_LEVEL: "warn", ...options.env },
    cwd,
    defaultPlugins: () => [greeter()],
    version: "9.9.9",
    settingPrefixes: options.prefixes,
    signals: false,
    onListen: (server) => servers.push(server),
  });
  return { code, cwd };
}

describe("a plugin's declared settings", () => {
  it.each([
    [{ GREETER_REPEAT: "abc" }, "vellum: GREETER_REPEAT: 'abc' is not a whole number from 1 to 5"],
    [{ GREETER_REPEAT: "3" }, "vellum: SERVICE_GREETER_TOKEN: required when GREETER_REPEAT is above 1"],
    [{ SERVICE_GREETER_TOKEN: SHORT_TOKEN }, "vellum: SERVICE_GREETER_TOKEN: shorter than 16 characters"],
  ])("--dry-run refuses %j with one line naming the variable and exit 2", async (env, line) => {
    const { code, cwd } = await run(["--dry-run"], { env: { SERVICE_API_KEY: API_KEY, ...env } });
    expect(stderr()).toEqual([line]);
    expect(err.join("")).not.toContain(SHORT_TOKEN);
    expect(stdout()).toEqual([]);
    expect(code).toBe(2);
    expect(existsSync(join(cwd, "data"))).toBe(false);
  });

  it("--dry-run names the config-file key when the bad value came from the file", async () => {
    const cwd = tempDir();
    writeConfigFile(cwd, "export default defineConfig({ pluginOptions: { greeter: { repeat: 0 } } });");
    const { code } = await run(["--dry-run"], { cwd, env: { SERVICE_API_KEY: API_KEY } });
    expect(stderr()).toEqual(["vellum: pluginOptions.greeter.repeat: expected a whole number from 1 to 5"]);
    expect(code).toBe(2);
  });

  it("--dry-run passes when the rule across settings holds", async () => {
    const env = { SERVICE_API_KEY: API_KEY, GREETER_REPEAT: "3", SERVICE_GREETER_TOKEN: TOKEN };
    const { code } = await run(["--dry-run"], { env });
    expect(stderr()).toEqual([]);
    expect(stdout()[0]).toContain("configuration OK; 1 plugin(s) (greeter)");
    expect(code).toBe(0);
  });

  it("serve hands ctx.options the environment's values over the config file's", async () => {
    const cwd = tempDir();
    writeConfigFile(
      cwd,
      "export default defineConfig({ pluginOptions: { greeter: { greeting: 'howdy', repeat: 5 } } });",
    );
    const env = { SERVICE_API_KEY: API_KEY, GREETER_REPEAT: "2", SERVICE_GREETER_TOKEN: TOKEN };
    const { code } = await run(["serve", "--port", "0", "--host", "127.0.0.1"], { cwd, env });
    expect(stderr()).toEqual([]);
    expect(code).toBe(0);
    const response = await fetch(`${servers[0]?.url}/api/v1/greeting`);
    expect(await response.json()).toEqual({ greeting: "howdy howdy", token: true });
  });
});

describe("variables nothing installed reads", () => {
  const env = {
    SERVICE_API_KEY: API_KEY,
    SERVICE_GREETER_TOKEN: TOKEN,
    SERVICE_GREETR_TOKEN: "misspelt-value",
    EXTRA_THING: "extra-value",
    EXTRA_EMPTY: " ",
    UNRELATED: "other-value",
  };

  it("are a warning each (name only) under SERVICE_ and the host's prefixes, and the dry run still passes", async () => {
    const { code } = await run(["--dry-run"], { env, prefixes: ["EXTRA_"] });
    expect(stderr()).toEqual([
      "vellum: warning: EXTRA_THING is set but no installed plugin reads it",
      "vellum: warning: SERVICE_GREETR_TOKEN is set but no installed plugin reads it",
    ]);
    expect(stdout()[0]).toContain("configuration OK");
    expect(code).toBe(0);
  });

  it("nor does a config file's pluginOptions key that no installed plugin has (a typo is a warning)", async () => {
    const cwd = tempDir();
    writeConfigFile(cwd, "export default defineConfig({ pluginOptions: { greetr: { greeting: 'howdy' } } });");
    const { code } = await run(["--dry-run"], { cwd, env: { SERVICE_API_KEY: API_KEY } });
    expect(stderr()).toEqual([
      "vellum: warning: pluginOptions.greetr in the config file belongs to no installed plugin",
    ]);
    expect(code).toBe(0);
  });

  it("do not keep serve from starting", async () => {
    const { code } = await run(["serve", "--port", "0", "--host", "127.0.0.1"], { env });
    expect(stderr()).toEqual(["vellum: warning: SERVICE_GREETR_TOKEN is set but no installed plugin reads it"]);
    expect(code).toBe(0);
    expect(servers).toHaveLength(1);
  });
});

describe("vellum config", () => {
  it("prints every setting with its value and source, secrets only as (set), and touches no data", async () => {
    const cwd = tempDir();
    writeConfigFile(cwd, "export default defineConfig({ pluginOptions: { greeter: { greeting: 'howdy' } } });");
    const env = { SERVICE_API_KEY: API_KEY, PORT: "4000", GREETER_REPEAT: "2", SERVICE_GREETER_TOKEN: TOKEN };
    const { code } = await run(["config", "--host", "0.0.0.0"], { cwd, env });
    expect(stderr()).toEqual([]);
    expect(code).toBe(0);
    const printed = stdout();
    expect(printed[0]).toMatch(/^GROUP +SETTING +VALUE +SOURCE$/);
    for (const row of [
      /^vellum +PORT +4000 +env$/,
      /^vellum +HOST +0\.0\.0\.0 +flag$/,
      new RegExp(`^vellum +SERVICE_DATA_DIR +${join(cwd, "data")} +default$`),
      /^vellum +SERVICE_API_KEY +\(set\) +env$/,
      /^vellum +SERVICE_BASE_URL +http:\/\/0\.0\.0\.0:4000 +default$/,
      /^vellum +SERVICE_CORS_ORIGINS +\(empty\) +default$/,
      /^vellum +SERVICE_LOG_LEVEL +warn +env$/,
      /^greeter +GREETER_GREETING +howdy +file$/,
      /^greeter +GREETER_REPEAT +2 +env$/,
      /^greeter +SERVICE_GREETER_TOKEN +\(set\) +env$/,
    ]) {
      expect(printed).toContainEqual(expect.stringMatching(row));
    }
    const vellumRows = printed.filter((line) => line.startsWith("vellum "));
    expect(printed.indexOf(vellumRows.at(-1) ?? "")).toBeLessThan(printed.findIndex((l) => l.startsWith("greeter")));
    for (const secret of [API_KEY, TOKEN]) expect(out.join("") + err.join("")).not.toContain(secret);
    expect(existsSync(join(cwd, "data"))).toBe(false);
  });

  it("shows an unset secret as (not set), and the stored API key as (set)", async () => {
    const { cwd } = await run(["config"]);
    expect(stdout()).toContainEqual(expect.stringMatching(/^vellum +SERVICE_API_KEY +\(not set\) +default$/));
    expect(stdout()).toContainEqual(expect.stringMatching(/^greeter +SERVICE_GREETER_TOKEN +\(not set\) +default$/));
    expect(existsSync(join(cwd, "data"))).toBe(false);
    out.length = 0;
    mkdirSync(join(cwd, "data", "settings"), { recursive: true });
    writeFileSync(join(cwd, "data", "settings", "api-key"), `${API_KEY}\n`);
    await run(["config"], { cwd });
    expect(stdout()).toContainEqual(expect.stringMatching(/^vellum +SERVICE_API_KEY +\(set\) +default$/));
    expect(out.join("")).not.toContain(API_KEY);
  });

  it("exits 2 with the one-line problems on bad configuration", async () => {
    const { code } = await run(["config"], { env: { GREETER_REPEAT: "abc", PORT: "x" } });
    expect(stderr()).toEqual([
      "vellum: PORT: 'x' is not a port number (0-65535)",
      "vellum: GREETER_REPEAT: 'abc' is not a whole number from 1 to 5",
    ]);
    expect(stdout()).toEqual([]);
    expect(code).toBe(2);
  });

  it("is listed by --help", async () => {
    expect((await run(["--help"])).code).toBe(0);
    expect(out.join("")).toMatch(/config +Print the effective configuration/);
  });
});

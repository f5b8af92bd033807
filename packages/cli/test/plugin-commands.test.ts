import { existsSync } from "node:fs";
import { join } from "node:path";
import { type AnyVellumPlugin, definePlugin } from "@vellum/core";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../src/index.js";
import { removeTempDirs, tempDir } from "./support.js";

// A real plugin with a real table and a declared command; only stdout/stderr are intercepted.

let out: string[];
let err: string[];
beforeEach(() => {
  out = [];
  err = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => out.push(String(chunk)) > 0);
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => err.push(String(chunk)) > 0);
});
afterEach(() => {
  vi.restoreAllMocks();
  removeTempDirs();
});

const lines = (chunks: string[]) => chunks.join("").split("\n").filter(Boolean);

const counter = definePlugin<Record<string, unknown>, { counter_value: { n: number } }>({
  name: "counter",
  commands: {
    "counter bump": { description: "Add to the counter" },
    "counter show": { description: "Print the counter" },
  },
  setup(ctx) {
    ctx.migrations({
      "0001_init": {
        up: (db) =>
          db.schema
            .createTable("counter_value")
            .addColumn("n", "integer", (c) => c.notNull())
            .execute(),
      },
    });
    ctx.command("counter bump", async (io) => {
      const by = Number(io.options.by ?? 1);
      if (!Number.isInteger(by)) {
        io.print("counter: --by must be an integer");
        return 2;
      }
      await ctx.db.insertInto("counter_value").values({ n: by }).execute();
      io.print(`counter: added ${by}${io.positionals.length ? ` (${io.positionals.join(" ")})` : ""}`);
    });
    ctx.command("counter show", async (io) => {
      const rows = await ctx.db.selectFrom("counter_value").select("n").execute();
      io.print(`counter: ${rows.reduce((sum, r) => sum + Number(r.n), 0)}`);
    });
  },
});

async function run(argv: string[], cwd: string, plugins: () => AnyVellumPlugin[] = () => [counter()]) {
  return runCli({ argv, env: { SERVICE_LOG_LEVEL: "warn" }, cwd, defaultPlugins: plugins, version: "1.0.0" });
}

describe("plugin commands", () => {
  it("runs a declared command in its own instance, with options and positionals, against the real database", async () => {
    const cwd = tempDir();
    expect(await run(["counter", "bump", "--by", "5", "because"], cwd)).toBe(0);
    expect(await run(["counter", "bump", "-by", "2"], cwd)).toBe(0);
    expect(await run(["counter", "show"], cwd)).toBe(0);
    expect(lines(out)).toEqual(["counter: added 5 (because)", "counter: added 2", "counter: 7"]);
    expect(lines(err)).toEqual([]);
  });

  it("passes the command's exit code through", async () => {
    expect(await run(["counter", "bump", "--by", "x"], tempDir())).toBe(2);
    expect(lines(out)).toEqual(["counter: --by must be an integer"]);
  });

  it("lists the commands the plugins declare", async () => {
    expect(await run(["commands"], tempDir())).toBe(0);
    expect(lines(out)).toEqual([
      "vellum counter bump  Add to the counter (counter)",
      "vellum counter show  Print the counter (counter)",
    ]);
  });

  it("answers an unknown command with exit 2 and touches no data", async () => {
    const cwd = tempDir();
    expect(await run(["counter", "reset"], cwd)).toBe(2);
    expect(lines(err)[0]).toBe("vellum: unknown command 'counter'");
    expect(existsSync(join(cwd, "data"))).toBe(false);
  });

  it("refuses two plugins declaring the same command", async () => {
    const twin = definePlugin({ name: "twin", commands: { "counter show": { description: "x" } }, setup() {} });
    expect(await run(["counter", "show"], tempDir(), () => [counter(), twin()])).toBe(2);
    expect(lines(err)[0]).toMatch(
      /^vellum: VELLUM_COMMAND_DUPLICATE: command 'vellum counter show' is declared by both/,
    );
  });

  it("refuses a handler bound without a declaration", async () => {
    const sneaky = definePlugin({
      name: "sneaky",
      commands: { sneak: { description: "declared" } },
      setup: (ctx) => ctx.command("undeclared", async () => 0),
    });
    expect(await run(["sneak"], tempDir(), () => [sneaky()])).not.toBe(0);
    expect(lines(err).join("\n")).toContain("binds command 'undeclared', but its definition does not declare it");
  });
});

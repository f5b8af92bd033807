import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { type AnyVellumPlugin, type DeclaredCommand, declaredCommands } from "@vellum/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { colorEnabled } from "../src/color.js";
import { BIN, VELLUM_DIST_URL, writeConfigFile } from "./support.js";

// Help, version and colour, seen by a user: child processes of the built `vellum` binary (they need
// `npm run build`), with their output piped, as in `vellum --help | cat`.

const ESC = "\u001b";
const CHILD_TIMEOUT_MS = 20_000;
const BUILTINS = ["serve", "migrate", "config", "commands", "help"];

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
}

let cwd: string;
let pluginCommands: DeclaredCommand[];

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), "vellum-help-"));
  const { defaultPlugins } = (await import(VELLUM_DIST_URL)) as { defaultPlugins: () => AnyVellumPlugin[] };
  pluginCommands = declaredCommands(defaultPlugins());
});

afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/**
 * Children run at most this many at a time: the tests below ask for dozens of help pages at once,
 * and on a loaded 2-core machine that many Node processes starting together would each take longer
 * than the kill timer, which starts only when a child is spawned.
 */
const MAX_CHILDREN = 4;
/** Each block starts some 40 children in all (about a second of CPU each), so its tests wait their turn. */
const BLOCK_TIMEOUT_MS = 120_000;
let running = 0;
const waiting: Array<() => void> = [];

async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_CHILDREN) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Runs the binary with only PATH (and `env`) in its environment: no inherited NO_COLOR, FORCE_COLOR, CI or TERM. */
function vellum(args: string[], env: NodeJS.ProcessEnv = {}, dir = cwd): Promise<Result> {
  return inTurn(() => spawnVellum(args, env, dir));
}

function spawnVellum(args: string[], env: NodeJS.ProcessEnv, dir: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const killer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
    child.once("error", reject);
    child.once("close", (status) => {
      clearTimeout(killer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** The command column of a help page's section: the first word(s) of each row, up to two spaces. */
function rows(page: string, heading: string): string[] {
  const lines = page.split("\n");
  const start = lines.findIndex((line) => line.startsWith(heading));
  if (start === -1) return [];
  const end = lines.findIndex((line, index) => index > start && line === "");
  return lines.slice(start + 1, end === -1 ? undefined : end).map((line) => line.trim().split(/ {2,}/, 1)[0] ?? "");
}

describe.concurrent("vellum --help and vellum help <command> (the built binary)", { timeout: BLOCK_TIMEOUT_MS }, () => {
  it("knows the default plugins' commands (so the tests below cover them)", () => {
    expect(pluginCommands.map((command) => command.name)).toEqual(
      expect.arrayContaining(["cache replay", "reindex", "webhooks replay"]),
    );
  });

  it("--help lists every built-in command, every default plugin's command, --help and --version", async () => {
    const result = await vellum(["--help"]);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe("");
    expect(rows(result.stdout, "COMMANDS").map((row) => row.split(" ", 1)[0])).toEqual(BUILTINS);
    expect(rows(result.stdout, "PLUGIN COMMANDS")).toEqual(pluginCommands.map((command) => command.name));
    for (const command of pluginCommands) {
      expect(result.stdout).toContain(`${command.description} (${command.plugin})`);
    }
    expect(rows(result.stdout, "OPTIONS")).toEqual(
      expect.arrayContaining(["--dry-run", "--port <port>", "-h, --help", "-v, --version"]),
    );
  });

  it("'vellum help <command>' prints exactly what 'vellum <command> --help' prints, for every command", async () => {
    const commands = [[], ...BUILTINS.filter((name) => name !== "help").map((name) => [name])];
    for (const command of pluginCommands) commands.push(command.name.split(" "));
    await Promise.all(
      commands.map(async (words) => {
        const [viaHelp, viaFlag] = await Promise.all([vellum(["help", ...words]), vellum([...words, "--help"])]);
        expect(viaHelp.status, words.join(" ")).toBe(0);
        expect(viaHelp.stderr).toBe("");
        expect(viaHelp.stdout.length).toBeGreaterThan(0);
        expect(viaHelp).toEqual(viaFlag);
      }),
    );
    const own = await vellum(["help", "help"]);
    expect(own.status).toBe(0);
    expect(own.stdout).toContain("vellum help [command]");
  });

  it("an unknown command asked for help: exit 2, one line on stderr, nothing on stdout, no data touched", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vellum-help-"));
    try {
      for (const args of [
        ["help", "nope"],
        ["nope", "--help"],
      ]) {
        const result = await vellum(args, {}, dir);
        expect(result.status).toBe(2);
        expect(result.stdout).toBe("");
        expect(result.stderr).toBe("vellum: unknown command 'nope' ('vellum --help' lists the commands)\n");
      }
      const partial = await vellum(["help", "webhooks"], {}, dir);
      expect(partial.status).toBe(2);
      expect(partial.stderr).toBe("vellum: unknown command 'webhooks' (did you mean 'webhooks replay'?)\n");
      expect(existsSync(join(dir, "data"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("--version and -v print the version of the vellum package", async () => {
    const url = new URL("../../vellum/package.json", import.meta.url);
    const { version } = JSON.parse(readFileSync(url, "utf8")) as { version: string };
    for (const flag of ["--version", "-v"]) {
      expect(await vellum([flag])).toEqual({ status: 0, stdout: `${version}\n`, stderr: "" });
    }
  });

  it("a plugin command's --help describes it and its flags, even with a bad setting, and touches no data", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vellum-help-"));
    try {
      const replay = await vellum(["webhooks", "replay", "--help"], { PORT: "not-a-port" }, dir);
      expect(replay.status).toBe(0);
      expect(replay.stderr).toBe("");
      expect(replay.stdout).toContain("vellum webhooks replay [options]");
      expect(rows(replay.stdout, "OPTIONS")).toEqual([
        "--id <delivery>",
        "--receiver <url|host>",
        "--data-dir <dir>",
        "-h, --help",
      ]);
      for (const command of pluginCommands) {
        const page = await vellum([...command.name.split(" "), "--help"], {}, dir);
        expect(page.stdout.split("\n", 1)[0]).toBe(command.description);
        expect(page.stdout).toContain(`Added by the ${command.plugin} plugin.`);
        const options = rows(page.stdout, "OPTIONS");
        for (const [name, option] of Object.entries(command.options)) {
          expect(options).toContain(`--${name}${option.value ? ` <${option.value}>` : ""}`);
          expect(page.stdout).toContain(option.description);
        }
        expect(options).toContain("--data-dir <dir>");
      }
      expect(existsSync(join(dir, "data"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("lists and describes the commands of the config file's plugins, with their declared options", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vellum-help-"));
    try {
      writeConfigFile(
        dir,
        [
          "const greeter = definePlugin({",
          "  name: 'greeter',",
          "  commands: {",
          "    'greet everyone': {",
          "      description: 'Say hello to every author',",
          "      options: { loud: { description: 'shout it' }, times: { description: 'how often', value: 'n' } },",
          "    },",
          "  },",
          "  setup(ctx) { ctx.command('greet everyone', async (io) => io.print('hello')); },",
          "});",
          "export default defineConfig({ plugins: [greeter()] });",
        ].join("\n"),
      );
      const root = await vellum(["--help"], {}, dir);
      expect(rows(root.stdout, "PLUGIN COMMANDS")).toContain("greet everyone");
      expect(root.stdout).toContain("Say hello to every author (greeter)");
      const page = await vellum(["help", "greet", "everyone"], {}, dir);
      expect(page.status).toBe(0);
      expect(rows(page.stdout, "OPTIONS")).toEqual(["--loud", "--times <n>", "--data-dir <dir>", "-h, --help"]);
      expect(page.stdout).toMatch(/--times <n> +how often/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.concurrent("colour (the built binary, output piped)", { timeout: BLOCK_TIMEOUT_MS }, () => {
  const hasEscape = (text: string) => text.includes(ESC);

  it("writes no escape code into a pipe by default, nor with NO_COLOR, nor with FORCE_COLOR=0 or false", async () => {
    for (const env of [{}, { NO_COLOR: "1" }, { FORCE_COLOR: "0" }, { FORCE_COLOR: "false" }, { TERM: "xterm" }]) {
      for (const args of [["--help"], ["reindex", "--help"], ["serve", "--help"]]) {
        const result = await vellum(args, env);
        expect(result.status).toBe(0);
        expect(hasEscape(result.stdout), `${JSON.stringify(env)} ${args.join(" ")}`).toBe(false);
      }
    }
    const usage = await vellum([]);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain("USAGE");
    expect(hasEscape(usage.stderr)).toBe(false);
  }, 90_000); // 16 processes of the built binary, one after another: about 10 s on a quiet machine

  it("colours with FORCE_COLOR, which wins over NO_COLOR; the text is the same once the colour is removed", async () => {
    const plain = await vellum(["--help"]);
    for (const env of [{ FORCE_COLOR: "1" }, { FORCE_COLOR: "3" }, { FORCE_COLOR: "1", NO_COLOR: "1" }]) {
      const result = await vellum(["--help"], env);
      expect(result.status).toBe(0);
      expect(result.stdout, JSON.stringify(env)).toMatch(new RegExp(`${ESC}\\[[0-9;]*m`));
      expect(stripVTControlCharacters(result.stdout)).toBe(plain.stdout);
    }
    const replay = await vellum(["help", "webhooks", "replay"], { FORCE_COLOR: "1" });
    expect(replay.stdout).toContain(`${ESC}[36m--id <delivery>`);
  });

  it("keeps the logger's colour out of a pipe too (consola alone would colour with FORCE_COLOR=0)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vellum-help-"));
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--host", "127.0.0.1"], {
      cwd: dir,
      env: { PATH: process.env.PATH, FORCE_COLOR: "0", SERVICE_API_KEY: "k".repeat(32) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise((resolve) => child.once("close", resolve));
    try {
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      const deadline = Date.now() + 15_000;
      while (!stdout.includes("listening on") && child.exitCode === null && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(stdout).toContain("listening on");
      expect(hasEscape(stdout)).toBe(false);
    } finally {
      child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("colorEnabled", () => {
  const tty = { isTTY: true };
  const pipe = { isTTY: false };

  it("colours a terminal, not a pipe, unless TERM is dumb", () => {
    expect(colorEnabled({}, tty)).toBe(true);
    expect(colorEnabled({ TERM: "xterm-256color" }, tty)).toBe(true);
    expect(colorEnabled({ TERM: "dumb" }, tty)).toBe(false);
    expect(colorEnabled({}, pipe)).toBe(false);
    expect(colorEnabled({}, {})).toBe(false);
  });

  it("NO_COLOR (not empty) turns colour off; an empty one counts as unset", () => {
    expect(colorEnabled({ NO_COLOR: "1" }, tty)).toBe(false);
    expect(colorEnabled({ NO_COLOR: "0" }, tty)).toBe(false);
    expect(colorEnabled({ NO_COLOR: "" }, tty)).toBe(true);
  });

  it("FORCE_COLOR (not empty) turns colour on anywhere and wins over NO_COLOR; 0 and false turn it off", () => {
    expect(colorEnabled({ FORCE_COLOR: "1" }, pipe)).toBe(true);
    expect(colorEnabled({ FORCE_COLOR: "true", TERM: "dumb" }, pipe)).toBe(true);
    expect(colorEnabled({ FORCE_COLOR: "1", NO_COLOR: "1" }, pipe)).toBe(true);
    expect(colorEnabled({ FORCE_COLOR: "0" }, tty)).toBe(false);
    expect(colorEnabled({ FORCE_COLOR: "false" }, tty)).toBe(false);
    expect(colorEnabled({ FORCE_COLOR: "" }, pipe)).toBe(false);
    expect(colorEnabled({ FORCE_COLOR: "", NO_COLOR: "1" }, tty)).toBe(false);
  });
});

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { format } from "node:util";
import { runCli } from "@vellum/cli";
import type { AnyVellumPlugin } from "@vellum/core";
import { type BackupOptions, backup } from "@vellum/plugin-backup";
import { createConsola, type ConsolaInstance, LogLevels } from "consola";
import { vi } from "vitest";
import { defaultPlugins } from "../src/index.js";
import { freePort } from "../../cli/test/support.js";

// Helpers of the backup plugin's integration tests (backup-*.test.ts): the default plugins with a
// configured backup plugin, cheap Argon2, captured logs, byte-level file helpers, and the built
// `vellum` binary run as a child process.

/** The cheapest Argon2id the format accepts (m = 19 MiB, t = 1, p = 1), so tests unlock fast. */
export const CHEAP_KDF = Object.freeze({ memoryKiB: 19_456, timeCost: 1, parallelism: 1 });

export const PASSPHRASE = "correct horse battery staple 42";

/** The API key of the child processes (`SERVICE_API_KEY`). */
export const CHILD_API_KEY = "backup-test-api-key-0123456789abcdef";

/** The built `vellum` binary (runs `packages/vellum/dist`). */
export const BIN = fileURLToPath(new URL("../bin/vellum.mjs", import.meta.url));
const VELLUM_DIST_URL = pathToFileURL(fileURLToPath(new URL("../dist/index.js", import.meta.url))).href;
const BUILD_CONFIG = fileURLToPath(new URL("../../../tsconfig.build.json", import.meta.url));

/** Builds the packages the binary runs (incremental: fast when up to date); for a `beforeAll`. */
export function buildDist(): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-b", BUILD_CONFIG], { stdio: "inherit" });
}

/** The default plugins, with the backup plugin created with `options` instead of the default one. */
export function backupPlugins(options: Partial<BackupOptions>): AnyVellumPlugin[] {
  return defaultPlugins().map((plugin) => (plugin.name === "backup" ? backup(options) : plugin));
}

/**
 * Runs the CLI in this process (`vellum <argv>`) with the default plugins, the backup plugin given
 * cheap Argon2, and only `env` as the environment; resolves to its exit code and what it wrote.
 */
export async function runCliInProcess(
  argv: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const out = vi
    .spyOn(process.stdout, "write")
    .mockImplementation((chunk: string | Uint8Array) => stdout.push(String(chunk)) > 0);
  const err = vi
    .spyOn(process.stderr, "write")
    .mockImplementation((chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0);
  try {
    const code = await runCli({
      argv,
      env: { SERVICE_LOG_LEVEL: "warn", SERVICE_API_KEY: CHILD_API_KEY, ...env },
      cwd,
      defaultPlugins: () => backupPlugins({ kdf: CHEAP_KDF }),
      version: "test",
    });
    return { code, stdout: stdout.join(""), stderr: stderr.join("") };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** A logger at `level` (default info) that keeps each line as `<type> <message>`. */
export function capturingLogger(level: number = LogLevels.info): { lines: string[]; logger: ConsolaInstance } {
  const lines: string[] = [];
  const logger = createConsola({
    level,
    reporters: [{ log: (entry) => lines.push(`${entry.type} ${format(...entry.args)}`) }],
  });
  return { lines, logger };
}

/** A fresh temporary directory; `removeAll()` of the same tracker removes it. */
export function tempDirs(prefix: string) {
  const made: string[] = [];
  return {
    make(base = tmpdir()): string {
      const dir = mkdtempSync(join(base, prefix));
      made.push(dir);
      return dir;
    },
    removeAll(): void {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every regular file under `dir` (recursive, symlinks not followed); `skip` prunes absolute paths. */
export function filesUnder(dir: string, skip: (path: string) => boolean = () => false): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    if (skip(path)) return;
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info) return;
    if (info.isDirectory()) {
      for (const name of readdirSync(path)) visit(join(path, name));
    } else if (info.isFile()) {
      found.push(path);
    }
  };
  visit(dir);
  return found;
}

/** The generation files (`vk-*.vpbk`) in `dir`, oldest first (their names sort by time). */
export function generationsIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => /^vk-\d{8}-\d{6}\.vpbk$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

/** Flips every bit of the byte in the middle of `file` (inside a DATA frame of any real generation). */
export function flipMiddleByte(file: string): void {
  const offset = Math.floor(statSync(file).size / 2);
  const fd = openSync(file, "r+");
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, offset);
    byte[0] = (byte[0] ?? 0) ^ 0xff;
    writeSync(fd, byte, 0, 1, offset);
  } finally {
    closeSync(fd);
  }
}

/** The files among `files` whose bytes contain `needle`. */
export function filesContaining(files: readonly string[], needle: Buffer): string[] {
  return files.filter((file) => readFileSync(file).includes(needle));
}

/** Whether something accepts a fresh TCP connection on 127.0.0.1:`port`. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port, timeout: 2_000 });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.once("connect", () => done(true));
    socket.once("timeout", () => done(false));
    socket.once("error", () => done(false));
  });
}

/**
 * `vellum.config.mjs` in `cwd` that gives the backup plugin cheap Argon2 (`pluginOptions.backup.kdf`,
 * a setting with no variable); it imports `defineConfig` from the built package, as a user's would.
 */
export function writeCheapKdfConfig(cwd: string): void {
  const body =
    `import { defineConfig } from ${JSON.stringify(VELLUM_DIST_URL)};\n` +
    `export default defineConfig({ pluginOptions: { backup: { kdf: ${JSON.stringify(CHEAP_KDF)} } } });\n`;
  writeFileSync(join(cwd, "vellum.config.mjs"), body);
}

/** Hard bound on any child's life. */
const CHILD_TIMEOUT_MS = 30_000;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Child {
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Both streams, stdout first. */
  output(): string;
  exited: Promise<Exit>;
}

/**
 * The child processes of one test file: `start` spawns the built binary with only `env` (plus PATH
 * and NO_COLOR), `killAll` SIGKILLs those still running and waits for them.
 */
export function binRunner() {
  const children: Child[] = [];

  function start(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Child {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH, NO_COLOR: "1", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
    const exited = new Promise<Exit>((resolve) => {
      child.once("close", (code, signal) => {
        clearTimeout(killer);
        resolve({ code, signal });
      });
    });
    const handle: Child = {
      process: child,
      stdout: () => stdout,
      stderr: () => stderr,
      output: () => `${stdout}${stderr}`,
      exited,
    };
    children.push(handle);
    return handle;
  }

  /** Runs the binary to completion (bounded); its exit code and output. */
  async function run(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
    const child = start(args, options);
    const { code } = await child.exited;
    return { code, stdout: child.stdout(), stderr: child.stderr() };
  }

  /** `vellum serve` on a free port of 127.0.0.1; resolves once it listens (or rejects with its output). */
  async function serve(dataDir: string, options: { cwd: string; env?: NodeJS.ProcessEnv }) {
    const port = await freePort();
    const child = start(["serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir], options);
    await waitForOutput(child, /listening on http:\/\/127\.0\.0\.1:\d+ /);
    return { child, port, url: `http://127.0.0.1:${port}` };
  }

  /** Stops a served child gracefully (SIGTERM), SIGKILL after 10 s. */
  async function stop(child: Child): Promise<Exit> {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return child.exited;
    child.process.kill("SIGTERM");
    const timer = setTimeout(() => child.process.kill("SIGKILL"), 10_000);
    const exit = await child.exited;
    clearTimeout(timer);
    return exit;
  }

  async function killAll(): Promise<void> {
    for (const child of children) {
      if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
    }
    await Promise.all(children.splice(0).map((child) => child.exited));
  }

  return { start, run, serve, stop, killAll };
}

/** Headers for a write to a served child: its API key, and a CSRF cookie with the matching header. */
export async function childWriteHeaders(url: string, apiKey = CHILD_API_KEY): Promise<Record<string, string>> {
  const res = await fetch(`${url}/docs/api/errors`, { signal: AbortSignal.timeout(10_000) });
  await res.arrayBuffer();
  const token = res.headers
    .getSetCookie()
    .find((c) => c.startsWith("svc_csrf="))
    ?.split(";")[0]
    ?.slice("svc_csrf=".length);
  if (!token) throw new Error("no svc_csrf cookie");
  return { authorization: `Bearer ${apiKey}`, cookie: `svc_csrf=${token}`, "x-csrf-token": token };
}

/** Waits until the child's output matches `pattern`; fails with its output when it exits or time runs out. */
export async function waitForOutput(child: Child, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(child.output());
    if (match) return match;
    const gone = child.process.exitCode !== null || child.process.signalCode !== null;
    if (gone || Date.now() > deadline) {
      throw new Error(
        `${gone ? "the process exited" : "timed out"} before printing ${pattern}\n` +
          `stdout:\n${child.stdout()}\nstderr:\n${child.stderr()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, connectionError, freePort, writeConfigFile } from "./support.js";

// Child-process tests of the real `vellum` binary (they need `npm run build`; the root `npm test` runs it).

/** Hard bound on any child's life; whatever still runs when its test finishes is killed. */
const CHILD_TIMEOUT_MS = 20_000;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Child {
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<Exit>;
}

type OnTestFinished = (fn: () => void | Promise<void>) => void;

/**
 * Temporary directories and child processes owned by one test (tests below run concurrently, so each cleans
 * up only its own): when the test finishes, its children still running are killed, then its directories removed.
 */
function scope(onTestFinished: OnTestFinished) {
  const dirs: string[] = [];
  const children: Child[] = [];
  onTestFinished(async () => {
    for (const child of children) {
      if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
    }
    await Promise.all(children.map((child) => child.exited));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), "vellum-bin-"));
    dirs.push(dir);
    return dir;
  }

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
    const handle = { process: child, stdout: () => stdout, stderr: () => stderr, exited };
    children.push(handle);
    return handle;
  }

  /** Runs the binary to completion (bounded) and returns its exit status and output. */
  async function vellum(args: string[], env: NodeJS.ProcessEnv = {}, cwd = tempDir()) {
    const child = start(args, { cwd, env });
    const { code } = await child.exited;
    return { status: code, stdout: child.stdout(), stderr: child.stderr() };
  }

  async function serve(dataDir: string, options: { cwd: string; env?: NodeJS.ProcessEnv }) {
    const port = await freePort();
    const child = start(["serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir], options);
    const [, url] = await waitForStdout(child, /listening on (http:\/\/127\.0\.0\.1:\d+) /);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    return { child, url: url ?? "" };
  }

  return { tempDir, start, vellum, serve };
}

/** Waits until the child's stdout matches `pattern`; fails with its output when it exits or time runs out. */
async function waitForStdout(child: Child, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(child.stdout());
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

/** Resolves with the exit once the child is gone, or rejects after `ms`. */
function exitWithin(child: Child, ms: number): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running ${ms} ms later\n${child.stderr()}`)), ms);
    void child.exited.then((exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
  });
}

describe("vellum serve (the built binary)", () => {
  it("prints the generated API key once, stores it with mode 0600, serves, and stops on SIGTERM and SIGINT", async ({
    onTestFinished,
  }) => {
    const { tempDir, serve } = scope(onTestFinished);
    const cwd = tempDir();
    const dataDir = join(cwd, "data");
    const keyFile = join(dataDir, "settings", "api-key");

    const first = await serve(dataDir, { cwd });
    const keyLines = first.child.stdout().match(/^.*generated an API key.*$/gm) ?? [];
    expect(keyLines).toHaveLength(1);
    const key = /: ([A-Za-z0-9_-]{43})$/.exec(keyLines[0] ?? "")?.[1];
    expect(key).toBeDefined();
    expect(keyLines[0]).toContain(keyFile);
    expect(readFileSync(keyFile, "utf8")).toBe(`${key}\n`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, "settings", "csrf-secret")).mode & 0o777).toBe(0o600);
    const page = await fetch(`${first.url}/docs/api/errors`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("not_found");
    first.child.process.kill("SIGTERM");
    expect(await exitWithin(first.child, 10_000)).toEqual({ code: 0, signal: null });
    expect(first.child.stderr()).toBe("");

    const second = await serve(dataDir, { cwd });
    expect((await fetch(`${second.url}/docs/api/errors`)).status).toBe(200);
    second.child.process.kill("SIGINT");
    expect(await exitWithin(second.child, 10_000)).toEqual({ code: 0, signal: null });
    expect(second.child.stdout()).not.toContain("generated an API key");
    expect(second.child.stdout()).not.toContain(key);
    expect(readFileSync(keyFile, "utf8")).toBe(`${key}\n`);
  });

  it("on SIGTERM finishes the request in flight, closes the plugins, exits 0 and refuses new connections", async ({
    onTestFinished,
  }) => {
    const { tempDir, serve } = scope(onTestFinished);
    const cwd = tempDir();
    writeConfigFile(
      cwd,
      [
        "const slow = definePlugin({",
        "  name: 'slow',",
        "  setup(ctx) {",
        "    ctx.router.get('/slow', async () => {",
        "      console.log('slow: started');",
        "      await new Promise((resolve) => setTimeout(resolve, 500));",
        "      console.log('slow: finished');",
        "      return { slept: 500 };",
        "    });",
        "    ctx.onClose(() => console.log('slow: closed'));",
        "  },",
        "});",
        "export default defineConfig({ plugins: [slow()] });",
      ].join("\n"),
    );
    const { child, url } = await serve(join(cwd, "data"), { cwd, env: { SERVICE_API_KEY: "k".repeat(32) } });

    const inFlight = fetch(`${url}/slow`).then(async (response) => ({
      status: response.status,
      body: await response.json(),
    }));
    await waitForStdout(child, /^slow: started$/m, 5_000);
    const signalledAt = Date.now();
    child.process.kill("SIGTERM");

    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ slept: 500 });
    expect(await exitWithin(child, 5_000)).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(5_000);
    // One channel, so the order is real: the handler finished before the plugins were closed.
    expect(child.stdout().match(/^slow: .*$/gm)).toEqual(["slow: started", "slow: finished", "slow: closed"]);
    expect(child.stderr()).toBe("");
    expect(await connectionError(url)).toBe("ECONNREFUSED");
  });
});

// --- vellum --dry-run: every bad configuration of contract §2 ---------------------------------------------------

const API_KEY = "api-key-secret-0123456789abcdef";
const DATABASE_PASSWORD = "db-password-5e1d";
const SHORT_KEY = "short-key-val";
const STORED_SHORT_KEY = "stored-short";
const UNCLAIMED_VALUE = "unclaimed-value-8c2b";
const WEBHOOK_PASSWORD = "hook-password-77f1";
const SHORT_WEBHOOK_SECRET = "hook-secret-3a";
const SECRETS = [
  API_KEY,
  DATABASE_PASSWORD,
  SHORT_KEY,
  STORED_SHORT_KEY,
  UNCLAIMED_VALUE,
  WEBHOOK_PASSWORD,
  SHORT_WEBHOOK_SECRET,
];

interface BadCase {
  name: string;
  variable: string;
  env: (dir: string) => NodeJS.ProcessEnv;
  prepare?: (dir: string) => void;
}

const BAD: BadCase[] = [
  { name: "unparsable number (PORT)", variable: "PORT", env: () => ({ PORT: "eighty" }) },
  {
    name: "unparsable number of a default plugin's setting (STORAGE_QUOTA_GB)",
    variable: "STORAGE_QUOTA_GB",
    env: () => ({ STORAGE_QUOTA_GB: "ten" }),
  },
  {
    name: "unsupported database URL with a password",
    variable: "SERVICE_DATABASE_URL",
    env: () => ({ SERVICE_DATABASE_URL: `postgres://vellum:${DATABASE_PASSWORD}@db.example/vellum` }),
  },
  { name: "API key too short", variable: "SERVICE_API_KEY", env: () => ({ SERVICE_API_KEY: SHORT_KEY }) },
  {
    name: "webhook receivers without a secret",
    variable: "SERVICE_WEBHOOK_SECRET",
    env: () => ({ SERVICE_WEBHOOK_URLS: "https://hooks.example/in" }),
  },
  {
    name: "webhook secret too short",
    variable: "SERVICE_WEBHOOK_SECRET",
    env: () => ({ SERVICE_WEBHOOK_URLS: "https://hooks.example/in", SERVICE_WEBHOOK_SECRET: SHORT_WEBHOOK_SECRET }),
  },
  {
    name: "webhook receiver that is not http(s)",
    variable: "SERVICE_WEBHOOK_URLS",
    env: () => ({ SERVICE_WEBHOOK_URLS: "ftp://hooks.example/in", SERVICE_WEBHOOK_SECRET: API_KEY }),
  },
  {
    name: "webhook receiver with credentials",
    variable: "SERVICE_WEBHOOK_URLS",
    env: () => ({
      SERVICE_WEBHOOK_URLS: `https://hook:${WEBHOOK_PASSWORD}@hooks.example/in`,
      SERVICE_WEBHOOK_SECRET: API_KEY,
    }),
  },
  {
    name: "stored API key too short",
    variable: "SERVICE_API_KEY",
    env: () => ({ SERVICE_API_KEY: "" }),
    prepare: (dir) => {
      mkdirSync(join(dir, "data", "settings"), { recursive: true });
      writeFileSync(join(dir, "data", "settings", "api-key"), `${STORED_SHORT_KEY}\n`);
    },
  },
];

describe.concurrent("vellum --dry-run (the built binary)", () => {
  it.for(BAD)(
    "$name: exit 2, one stderr line naming $variable, no secret",
    async ({ variable, env, prepare }, { onTestFinished }) => {
      const { tempDir, vellum } = scope(onTestFinished);
      const dir = tempDir();
      prepare?.(dir);
      const result = await vellum(["--dry-run"], { SERVICE_API_KEY: API_KEY, ...env(dir) }, dir);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^[^\n]+\n$/);
      expect(result.stderr.startsWith(`vellum: ${variable}: `)).toBe(true);
      for (const secret of SECRETS) expect(result.stderr).not.toContain(secret);
      expect(result.status).toBe(2);
    },
  );

  it("stops with one line that says to restore from a backup when the database file is damaged", async ({
    onTestFinished,
  }) => {
    const { tempDir, vellum } = scope(onTestFinished);
    const dataDir = tempDir();
    mkdirSync(join(dataDir, "db"), { recursive: true, mode: 0o700 });
    writeFileSync(join(dataDir, "db", "vellum.sqlite"), "this is not a database, it is a text file of some length");
    const result = await vellum(["serve", "--port", "0", "--data-dir", dataDir], { SERVICE_API_KEY: "k".repeat(32) });
    expect(result.stderr).toBe(
      'vellum: file is not a database (SQLITE_NOTADB): the database file is damaged; restore it from a backup (docs/operations.md, "Backups and restores")\n',
    );
    expect(result.status).toBe(1);
  });

  it("prints the exact line for an unparsable port", async ({ onTestFinished }) => {
    const { vellum } = scope(onTestFinished);
    const result = await vellum(["--dry-run"], { PORT: "abc" });
    expect(result.stderr).toBe("vellum: PORT: 'abc' is not a port number (0-65535)\n");
    expect(result.stdout).toBe("");
    expect(result.status).toBe(2);
  });

  it("lists every problem at once, one line each", async ({ onTestFinished }) => {
    const { tempDir, vellum } = scope(onTestFinished);
    const dir = tempDir();
    const result = await vellum(["--dry-run"], { PORT: "x", SERVICE_API_KEY: SHORT_KEY, STORAGE_QUOTA_GB: "0" }, dir);
    expect(
      result.stderr
        .split("\n")
        .slice(0, -1)
        .map((line) => line.split(":", 2)[1]?.trim()),
    ).toEqual(["PORT", "SERVICE_API_KEY", "STORAGE_QUOTA_GB"]);
    expect(result.status).toBe(2);
  });

  it("passes a good configuration (every secret set) with exit 0, one summary line and no secret", async ({
    onTestFinished,
  }) => {
    const { tempDir, vellum } = scope(onTestFinished);
    const dir = tempDir();
    const result = await vellum(
      ["-dry-run", "-port", "4555"],
      {
        PORT: "4000",
        SERVICE_API_KEY: API_KEY,
        SERVICE_DATA_DIR: join(dir, "data"),
        STORAGE_QUOTA_GB: "2.5",
      },
      dir,
    );
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/^[^\n]+\n$/);
    expect(result.stdout).toContain("configuration OK");
    expect(result.stdout).toContain("would listen on 127.0.0.1:4555");
    expect(result.stdout).toContain(`data directory ${join(dir, "data")}`);
    for (const secret of SECRETS) expect(result.stdout).not.toContain(secret);
    expect(result.status).toBe(0);
  });

  it("warns about a set variable in the distribution's namespaces that no installed plugin reads, and still passes", async ({
    onTestFinished,
  }) => {
    const { tempDir, vellum } = scope(onTestFinished);
    const dir = tempDir();
    const result = await vellum(["--dry-run"], { BACKUP_TARGETS: UNCLAIMED_VALUE, SERVICE_API_KEY: API_KEY }, dir);
    expect(result.stderr).toBe("vellum: warning: BACKUP_TARGETS is set but no installed plugin reads it\n");
    expect(result.stdout).toContain("configuration OK");
    expect(result.status).toBe(0);
  });

  it("loads the config file's plugins and checks their graph", async ({ onTestFinished }) => {
    const { tempDir, vellum } = scope(onTestFinished);
    const ok = tempDir();
    writeConfigFile(ok, "export default defineConfig({ plugins: [definePlugin({ name: 'extra', setup() {} })()] });");
    const good = await vellum(["--dry-run"], {}, ok);
    expect(good.stderr).toBe("");
    expect(good.stdout).toContain(
      "10 plugin(s) (articles, search, cache, webhooks, health, media, backup, openapi, admin, extra)",
    );
    expect(good.status).toBe(0);

    const missing = tempDir();
    writeConfigFile(
      missing,
      "export default defineConfig({ plugins: [definePlugin({ name: 'extra', dependsOn: ['nowhere'], setup() {} })()] });",
    );
    const bad = await vellum(["--dry-run"], {}, missing);
    expect(bad.stderr).toMatch(/^vellum: VELLUM_PLUGIN_DEPENDENCY_MISSING: [^\n]*nowhere[^\n]*\n$/);
    expect(bad.stdout).toBe("");
    expect(bad.status).toBe(2);
  });
});

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// Drives the example through the real `vellum` binary (it needs `npm run build`; the root `npm test`
// runs it): a temporary working directory whose `vellum.config.mjs` installs both example plugins
// beside the default ones, the plugins' setting from the environment, and plain HTTP.

const BIN = fileURLToPath(new URL("../../../packages/vellum/bin/vellum.mjs", import.meta.url));
/** The example's entry; the CLI loads the config file (and the TypeScript it imports) through jiti. */
const EXAMPLE = new URL("../src/index.ts", import.meta.url).href;
const API_KEY = "reading-time-example-key-0123456789abcdef";
/** Hard bound on any child's life. */
const CHILD_TIMEOUT_MS = 25_000;

interface Child {
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A working directory with a `vellum.config.mjs` that installs the example's two plugins. */
function workingDir(): string {
  const cwd = mkdtempSync(join(tmpdir(), "vellum-reading-time-"));
  dirs.push(cwd);
  writeFileSync(
    join(cwd, "vellum.config.mjs"),
    [
      `import { readingLog, readingTime } from ${JSON.stringify(EXAMPLE)};`,
      // No option in code: an option given to the factory would win over READING_TIME_WPM.
      "export default { plugins: [readingTime(), readingLog()] };",
    ].join("\n"),
  );
  return cwd;
}

function vellum(args: string[], cwd: string, env: Record<string, string>): Child {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
  const child = spawn(process.execPath, [BIN, ...args, "--data-dir", join(cwd, "data")], {
    cwd,
    env: { PATH: process.env.PATH, NO_COLOR: "1", SERVICE_API_KEY: API_KEY, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const killer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
  const exited = new Promise<number | null>((resolve) =>
    child.once("close", (code) => {
      clearTimeout(killer);
      resolve(code);
    }),
  );
  return { process: child, stdout: () => stdout, stderr: () => stderr, exited };
}

function stop(child: Child): Promise<number | null> {
  if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
  return child.exited;
}

/** Resolves with the exit code once the child is gone; rejects after `ms`. */
function exitWithin(child: Child, ms: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running ${ms} ms later\n${child.stderr()}`)), ms);
    void child.exited.then((code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Polls `probe` until it returns a value (not undefined); fails after `ms`. */
async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function listening(child: Child): Promise<string> {
  return until("the server to listen", 15_000, async () => {
    const url = /listening on (http:\/\/\S+) /.exec(child.stdout())?.[1];
    if (url === undefined && child.process.exitCode !== null) {
      throw new Error(`vellum serve exited\nstdout:\n${child.stdout()}\nstderr:\n${child.stderr()}`);
    }
    return url;
  });
}

interface ReadingTime {
  slug: string;
  minutes: number;
  source: "estimate" | "override";
}

describe("the reading-time example under `vellum serve`", () => {
  it("takes its setting from the environment, writes in the article's transaction, announces a declared hook another plugin hears, overrides in its own write and reports health", async () => {
    const cwd = workingDir();
    const server = vellum(["serve", "--host", "127.0.0.1", "--port", "0"], cwd, { READING_TIME_WPM: "100" });
    try {
      const url = await listening(server);
      const get = async (path: string) => {
        const res = await fetch(`${url}${path}`);
        return { status: res.status, body: await res.json() };
      };

      // The CSRF cookie (double submit): its value goes back in X-CSRF-Token.
      const cookie = (await fetch(`${url}/health/live`)).headers
        .getSetCookie()
        .map((line) => line.split(";", 1)[0] ?? "")
        .find((pair) => pair.startsWith("svc_csrf="));
      expect(cookie).toBeDefined();
      const csrf = cookie?.slice("svc_csrf=".length) ?? "";
      const write = async (method: string, path: string, body: unknown, auth = { key: true, csrf: true }) => {
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (auth.key) headers.authorization = `Bearer ${API_KEY}`;
        if (auth.csrf) Object.assign(headers, { cookie: `svc_csrf=${csrf}`, "x-csrf-token": csrf });
        const res = await fetch(`${url}${path}`, { method, headers, body: JSON.stringify(body) });
        return { status: res.status, body: res.status === 204 ? undefined : await res.json() };
      };
      const log = async (): Promise<ReadingTime[]> => (await get("/api/v1/reading-log")).body.changes;

      // 1000 words: 10 minutes at READING_TIME_WPM=100 (5 at the default 230).
      const words = Array.from({ length: 1000 }, (_, i) => `word${i}`).join(" ");
      const created = await write("POST", "/api/v1/articles", {
        title: "Long read",
        slug: "long-read",
        content: `<p>${words}</p>`,
      });
      expect(created.status).toBe(202);
      await until("the create to be applied", 10_000, async () => {
        const job = await get(`/api/v1/jobs/${created.body.id}`);
        expect(job.body.status).not.toBe("failed");
        return job.body.status === "applied" ? true : undefined;
      });
      const estimate: ReadingTime = { slug: "long-read", minutes: 10, source: "estimate" };
      expect(await get("/api/v1/reading-time/long-read")).toEqual({ status: 200, body: estimate });
      // `reading_time:changed` runs after the commit, so the log may hear it a moment after the job applied.
      await until("reading_log to hear the estimate", 5_000, async () => ((await log()).length > 0 ? true : undefined));
      expect(await log()).toEqual([estimate]);

      // The override is a write route: the kernel refuses it without the key, then without the CSRF token.
      const refusedKey = await write(
        "PUT",
        "/api/v1/reading-time/long-read",
        { minutes: 3 },
        { key: false, csrf: true },
      );
      expect([refusedKey.status, refusedKey.body.error.code]).toEqual([401, "unauthorized"]);
      const refusedCsrf = await write(
        "PUT",
        "/api/v1/reading-time/long-read",
        { minutes: 3 },
        { key: true, csrf: false },
      );
      expect([refusedCsrf.status, refusedCsrf.body.error.code]).toEqual([403, "csrf_failed"]);
      const invalid = await write("PUT", "/api/v1/reading-time/long-read", { minutes: 2.5 });
      expect([invalid.status, invalid.body.error.code]).toEqual([400, "validation_failed"]);
      const unknown = await write("PUT", "/api/v1/reading-time/no-such-article", { minutes: 3 });
      expect([unknown.status, unknown.body.error.code]).toEqual([404, "not_found"]);
      expect(await log()).toEqual([estimate]); // nothing committed, nothing announced

      // The transactional write: `ctx.write` resolves after its after-commit hooks, so the log has it already.
      const override: ReadingTime = { slug: "long-read", minutes: 3, source: "override" };
      expect(await write("PUT", "/api/v1/reading-time/long-read", { minutes: 3 })).toEqual({
        status: 200,
        body: override,
      });
      expect(await get("/api/v1/reading-time/long-read")).toEqual({ status: 200, body: override });
      expect(await log()).toEqual([estimate, override]);

      // The health component, on its own and among the dependencies.
      expect(await get("/health/reading_time")).toEqual({
        status: 200,
        body: { status: "ok", state: "ok", estimates: 1 },
      });
      const dependencies = await get("/health/dependencies");
      expect(dependencies.status).toBe(200);
      expect(dependencies.body.dependencies.reading_time).toEqual({ status: "ok", estimates: 1 });

      // Deleting the article deletes its estimate in the same transaction.
      expect((await write("DELETE", "/api/v1/articles/long-read", undefined)).status).toBe(204);
      expect((await get("/api/v1/reading-time/long-read")).status).toBe(404);
      expect((await get("/health/reading_time")).body.estimates).toBe(0);

      server.process.kill("SIGTERM");
      expect(await exitWithin(server, 10_000)).toBe(0);
      expect(server.stderr()).toBe(""); // no hook, write or health check reported a failure
    } finally {
      await stop(server);
    }
  });

  it("`vellum config` lists READING_TIME_WPM with its value and source", async () => {
    const cwd = workingDir();
    const config = vellum(["config"], cwd, { READING_TIME_WPM: "100" });
    try {
      expect(await exitWithin(config, 15_000)).toBe(0);
      expect(config.stdout()).toMatch(/^reading_time +READING_TIME_WPM +100 +env *$/m);
    } finally {
      await stop(config);
    }
  });

  it("refuses READING_TIME_WPM=abc: exit 2 with one line naming the variable", async () => {
    const cwd = workingDir();
    const server = vellum(["serve", "--host", "127.0.0.1", "--port", "0"], cwd, { READING_TIME_WPM: "abc" });
    try {
      expect(await exitWithin(server, 15_000)).toBe(2);
      const lines = server.stderr().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("READING_TIME_WPM");
      expect(lines[0]).toContain("'abc' is not a whole number from 50 to 2000");
      expect(server.stdout()).not.toContain("listening");
    } finally {
      await stop(server);
    }
  });
});

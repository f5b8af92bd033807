import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, freePort, removeTempDirs, sleep, tempDir, writeConfigFile } from "./support.js";

const API_KEY = "json-log-test-api-key-0123456789";
const SEARCHED = "zebracrossingsecret";

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill("SIGKILL");
  child = undefined;
  removeTempDirs();
});

/** `vellum serve` on a free port from `cwd`, resolved once it listens, with what it wrote so far. */
async function serve(env: NodeJS.ProcessEnv, cwd: string) {
  const port = await freePort();
  const output = { stdout: "", stderr: "" };
  child = spawn(process.execPath, [BIN, "serve", "--port", String(port), "--data-dir", join(cwd, "data")], {
    cwd,
    env: { PATH: process.env.PATH, SERVICE_API_KEY: API_KEY, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()));
  const deadline = Date.now() + 20_000;
  while (!output.stdout.includes("listening on")) {
    if (Date.now() > deadline) throw new Error(`no start: ${output.stderr}`);
    await sleep(50);
  }
  return { base: `http://127.0.0.1:${port}`, output };
}

describe("SERVICE_LOG_FORMAT=json", () => {
  it("writes one JSON object a line, access lines with request id, route, status and duration, never a query", async () => {
    const { base, output } = await serve({ SERVICE_LOG_FORMAT: "json" }, tempDir());
    const live = await fetch(`${base}/health/live?token=abc`);
    const search = await fetch(`${base}/api/v1/search?q=${SEARCHED}`);
    expect([live.status, search.status]).toEqual([200, 200]);
    await sleep(200);
    child?.kill("SIGTERM");
    await new Promise((resolve) => child?.once("exit", resolve));
    const { stdout, stderr } = output;

    const lines = stdout.split("\n").filter((line) => line.length > 0);
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const entry of entries) {
      expect(entry).toMatchObject({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), level: expect.any(String) });
      expect(typeof entry.msg).toBe("string");
    }
    const access = entries.filter((entry) => entry.tag === "vellum:http" && entry.request_id !== undefined);
    expect(access.map((entry) => [entry.method, entry.route, entry.status])).toEqual([
      ["GET", "/health/live", 200],
      ["GET", "/api/v1/search", 200],
    ]);
    for (const entry of access) {
      expect(entry.request_id).toMatch(/^[\w-]{8,}$/);
      expect(typeof entry.duration_ms).toBe("number");
    }
    expect(`${stdout}${stderr}`).not.toContain(SEARCHED);
    expect(`${stdout}${stderr}`).not.toContain("token=abc");
  }, 40_000);

  it("is also taken from the config file's logFormat", async () => {
    const cwd = tempDir();
    writeConfigFile(cwd, 'export default defineConfig({ logFormat: "json" });\n');
    const { base, output } = await serve({}, cwd);
    await fetch(`${base}/health/live`);
    await sleep(200);
    const lines = output.stdout.split("\n").filter((line) => line.length > 0);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ level: expect.any(String) });
  }, 40_000);

  it("refuses another format at --dry-run with one line and exit 2", () => {
    const result = spawnSync(process.execPath, [BIN, "--dry-run"], {
      env: { PATH: process.env.PATH, SERVICE_API_KEY: API_KEY, SERVICE_LOG_FORMAT: "xml" },
      encoding: "utf8",
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe("vellum: SERVICE_LOG_FORMAT: 'xml' is not text or json\n");
  });
});

describe("text logs (the default)", () => {
  it("start each line with an ISO 8601 UTC time and the level, colourless in a pipe", async () => {
    const { base, output } = await serve({}, tempDir());
    await fetch(`${base}/health/live?token=abc`);
    await sleep(200);
    const lines = output.stdout.split("\n").filter((line) => line.length > 0);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z [A-Z]+ +(\[[\w:]+\] )?\S/);
    expect(lines.some((line) => line.includes("listening on"))).toBe(true);
    expect(output.stdout).not.toContain("\u001b[");
    expect(output.stdout).not.toContain("token=abc");
  }, 40_000);
});

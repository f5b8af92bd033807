import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../../vellum/bin/vellum.mjs", import.meta.url));
const API_KEY = "json-log-test-api-key-0123456789";
const SEARCHED = "zebracrossingsecret";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

let child: ChildProcess | undefined;
let dataDir: string | undefined;
afterEach(() => {
  child?.kill("SIGKILL");
  child = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

describe("SERVICE_LOG_FORMAT=json", () => {
  it("writes one JSON object a line, access lines with request id, route, status and duration, never a query", async () => {
    const port = await freePort();
    dataDir = mkdtempSync(join(tmpdir(), "vellum-json-log-"));
    child = spawn(process.execPath, [BIN, "serve", "--port", String(port), "--data-dir", dataDir], {
      env: { PATH: process.env.PATH, SERVICE_API_KEY: API_KEY, SERVICE_LOG_FORMAT: "json" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    while (!stdout.includes("listening on")) {
      if (Date.now() > deadline) throw new Error(`no start: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const live = await fetch(`${base}/health/live?token=abc`);
    const search = await fetch(`${base}/api/v1/search?q=${SEARCHED}`);
    expect([live.status, search.status]).toEqual([200, 200]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    child.kill("SIGTERM");
    await new Promise((resolve) => child?.once("exit", resolve));

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
    const port = await freePort();
    dataDir = mkdtempSync(join(tmpdir(), "vellum-json-log-"));
    writeFileSync(join(dataDir, "vellum.config.mjs"), 'export default { logFormat: "json" };\n');
    child = spawn(process.execPath, [BIN, "serve", "--port", String(port), "--data-dir", join(dataDir, "data")], {
      cwd: dataDir,
      env: { PATH: process.env.PATH, SERVICE_API_KEY: API_KEY },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const deadline = Date.now() + 20_000;
    while (!stdout.includes("listening on")) {
      if (Date.now() > deadline) throw new Error("no start");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await fetch(`http://127.0.0.1:${port}/health/live`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const lines = stdout.split("\n").filter((line) => line.length > 0);
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

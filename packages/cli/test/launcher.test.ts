import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { watchLauncher } from "../src/launcher.js";
import { freePort, removeTempDirs, sleep, tempDir } from "./support.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const API_KEY = "launcher-test-api-key-0123456789";

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const answers = (url: string) =>
  fetch(url).then(
    (res) => res.ok,
    () => false,
  );

/** The pid of the process serving on `port` among this machine's processes, from /proc. */
function serverPid(port: number): number | undefined {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (cmdline[0]?.endsWith("node") && cmdline.includes("serve") && cmdline.includes(String(port)))
        return Number(name);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

let launcher: ChildProcess | undefined;
let server: number | undefined;
afterEach(() => {
  launcher?.kill("SIGKILL");
  launcher = undefined;
  // Never leave an orphaned server behind, even when the test fails.
  if (server !== undefined) {
    try {
      process.kill(server, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  server = undefined;
  removeTempDirs();
});

describe("a server started through npm", () => {
  it("shuts down gracefully when SIGTERM ends its launcher, instead of living on as an orphan", async () => {
    const port = await freePort();
    const dataDir = tempDir("vellum-launcher-");
    launcher = spawn("npm", ["exec", "--", "vellum", "serve", "--port", String(port), "--data-dir", dataDir], {
      cwd: root,
      env: { ...process.env, SERVICE_API_KEY: API_KEY, SERVICE_LOG_LEVEL: "info", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    launcher.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    launcher.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const url = `http://127.0.0.1:${port}/health/live`;
    await until(() => answers(url), "the server to answer", 30_000);
    const pid = serverPid(port);
    server = pid;
    expect(pid).toBeGreaterThan(0);
    expect(pid).not.toBe(launcher.pid);

    launcher.kill("SIGTERM");
    await until(async () => !(await answers(url)) && serverPid(port) === undefined, "the server to exit");
    await until(() => output.includes("shutdown complete"), "the shutdown's last line");
    expect(output).toMatch(/shutting down: its launcher \(npm, pid \d+\) exited/);
  }, 60_000);
});

describe("watchLauncher", () => {
  it("watches nothing when npm did not start the process", () => {
    expect(watchLauncher(() => undefined, {})).toBeUndefined();
    const watch = watchLauncher(() => undefined, { npm_command: "exec" });
    expect(watch).toBeDefined();
    watch?.stop();
  });
});

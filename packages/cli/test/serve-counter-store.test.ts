import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, removeTempDirs, tempDir, writeConfigFile } from "./support.js";

// `vellum serve` with SERVICE_REDIS_URL closes its Redis client on every way out, so a start that
// fails ends the process (the built binary: needs `npm run build`, like the other tests of it).

afterEach(removeTempDirs);

describe("vellum serve with SERVICE_REDIS_URL", () => {
  it("exits when the instance cannot be created, instead of living on with its Redis client", async () => {
    const cwd = tempDir();
    // A plugin that declares a hook of the core's: createVellum refuses it.
    writeConfigFile(
      cwd,
      "export default defineConfig({ plugins: [definePlugin({ name: 'clash', hooks: { 'vellum:ready': 'serial' }, setup() {} })()] });",
    );
    // Nothing listens on port 1: the client keeps reconnecting for as long as it is open.
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--data-dir", join(cwd, "data")], {
      cwd,
      env: {
        PATH: process.env.PATH,
        NO_COLOR: "1",
        SERVICE_API_KEY: "k".repeat(32),
        SERVICE_REDIS_URL: "redis://127.0.0.1:1",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    clearTimeout(killer);
    expect(stderr).toContain("VELLUM_HOOK_DUPLICATE");
    expect(code).toBe(1);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The built `vellum` binary and the built `vellum` package (both need `npm run build`). */
export const BIN = fileURLToPath(new URL("../../vellum/bin/vellum.mjs", import.meta.url));
export const VELLUM_DIST_URL = pathToFileURL(
  fileURLToPath(new URL("../../vellum/dist/index.js", import.meta.url)),
).href;

const made: string[] = [];

/** A fresh temporary directory, removed by `removeTempDirs()`. */
export function tempDir(prefix = "vellum-cli-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * Writes `vellum.config.mjs` into `cwd`. The file imports `defineConfig` and `definePlugin` from the built
 * `vellum` package by absolute file URL, the way a user's config imports them from `vellum`.
 */
export function writeConfigFile(cwd: string, body: string): void {
  const head = `import { defineConfig, definePlugin } from ${JSON.stringify(VELLUM_DIST_URL)};\n`;
  writeFileSync(join(cwd, "vellum.config.mjs"), head + body);
}

/** A TCP port nothing listens on right now (bound to port 0 on 127.0.0.1, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Opens a fresh TCP connection to the host and port of `url`: resolves to the error code when it fails
 * (`ECONNREFUSED`), or undefined when something accepted it. (A plain `fetch` could reuse a pooled socket.)
 */
export function connectionError(url: string): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port), timeout: 5_000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve("ETIMEDOUT");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

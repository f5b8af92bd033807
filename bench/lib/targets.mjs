import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "./server.mjs";

const bareServer = fileURLToPath(new URL("../servers/bare-http.mjs", import.meta.url));
const h3Server = fileURLToPath(new URL("../servers/h3-headers.mjs", import.meta.url));
const vellumBin = fileURLToPath(new URL("../../packages/vellum/bin/vellum.mjs", import.meta.url));

/**
 * @typedef {object} Target
 * @property {string} name
 * @property {(env?: NodeJS.ProcessEnv, launcher?: import("./server.mjs").Launcher) => Promise<import("./server.mjs").RunningServer & { dataDir?: string }>} start
 *   spawns the server (with `env` added to its environment, under `launcher` if given) and waits for /health/live
 */

/** @type {Target} */
export const bare = {
  name: "bare node:http",
  start: (env = {}, launcher) => startServer({ args: (port) => [bareServer, "--port", String(port)], env, launcher }),
};

/** @type {Target} h3 alone sending the headers a Vellum response carries (the kernel target's reference). */
export const h3Headers = {
  name: "h3 + same headers",
  start: (env = {}, launcher) => startServer({ args: (port) => [h3Server, "--port", String(port)], env, launcher }),
};

/** @type {Target} `vellum serve` on a fresh temporary data directory (`dataDir`), removed again on stop. */
export const vellum = {
  name: "vellum serve",
  async start(env = {}, launcher) {
    const dataDir = await mkdtemp(join(tmpdir(), "vellum-bench-"));
    const cleanup = () => rm(dataDir, { recursive: true, force: true });
    try {
      const server = await startServer({
        args: (port) => [vellumBin, "serve", "--port", String(port), "--host", "127.0.0.1", "--data-dir", dataDir],
        env: { SERVICE_LOG_LEVEL: "warn", ...env },
        launcher,
      });
      return {
        ...server,
        dataDir,
        async stop() {
          await server.stop();
          await cleanup();
        },
      };
    } catch (err) {
      await cleanup();
      throw err;
    }
  },
};

/** Every target, baseline first. */
export const targets = [bare, vellum];

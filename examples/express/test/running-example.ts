import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app.js";

export const API_KEY = "example-key-0123456789-abcdef";

export interface RunningExample {
  /** `http://127.0.0.1:<port>`: Express at `/`, Vellum under `/cms`. */
  base: string;
  /** Closes the server and Vellum and removes the data dir. */
  stop(): Promise<void>;
}

/** The example app on a port of its own over a new data dir. */
export async function startExample(): Promise<RunningExample> {
  const dataDir = await mkdtemp(join(tmpdir(), "vellum-example-express-"));
  const app = await createApp({ dataDir, apiKey: API_KEY });
  const server = app.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      await app.vellum.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

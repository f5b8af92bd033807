import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type App, createApp } from "../src/app.js";

let app: App;
let base: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "vellum-example-node-"));
  app = await createApp({ dataDir, apiKey: "example-key-0123456789-abcdef" });
  await new Promise<void>((resolve) => app.server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => app.server.close(resolve));
  await app.vellum.close();
  await rm(dataDir, { recursive: true, force: true });
});

it("serves the host's own page and Vellum's routes side by side", async () => {
  expect(await (await fetch(`${base}/`)).text()).toBe("my app's own page\n");
  const health = await fetch(`${base}/health`);
  expect(health.status).toBe(200);
  expect((await health.json()).status).toBe("ok");
  const list = await fetch(`${base}/api/v1/articles`);
  expect(await list.json()).toEqual({ articles: [], next_cursor: null });
});

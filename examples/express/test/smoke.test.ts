import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type App, createApp } from "../src/app.js";

let app: App;
let server: Server;
let base: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "vellum-example-express-"));
  app = await createApp({ dataDir, apiKey: "example-key-0123456789-abcdef" });
  server = app.app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await app.vellum.close();
  await rm(dataDir, { recursive: true, force: true });
});

it("lets Vellum answer its routes and passes the rest to Express", async () => {
  expect(await (await fetch(`${base}/`)).text()).toBe("express home\n");
  expect(await (await fetch(`${base}/elsewhere`)).text()).toBe("express 404\n");
  const live = await fetch(`${base}/health/live`);
  expect(await live.json()).toEqual({ live: true });
  expect(live.headers.get("x-request-id")).toBeTruthy();
  const write = await fetch(`${base}/api/v1/articles`, {
    method: "POST",
    body: "{}",
    headers: { "content-type": "application/json" },
  });
  expect(write.status).toBe(401);
});

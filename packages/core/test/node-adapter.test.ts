import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { probePlugin } from "./fixtures/probe-plugin.js";

let t: TestVellum | undefined;
let host: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (host ? host.close(r) : r(undefined)));
  host = undefined;
  await t?.close();
  t = undefined;
});

const listenOn = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

describe("Node adapter", () => {
  it("serves over a real socket and sees the socket address as the client IP", async () => {
    t = await createTestVellum({ plugins: [probePlugin()] });
    host = createServer(t.vellum.handler);
    const base = await listenOn(host);
    for (let i = 0; i < 3; i++) expect((await fetch(`${base}/api/v1/limited`)).status).toBe(200);
    const res = await fetch(`${base}/api/v1/limited`);
    expect(res.status).toBe(429);
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("works as Connect/Express-style middleware: unknown paths fall through to the host app", async () => {
    t = await createTestVellum({ plugins: [probePlugin()] });
    const middleware = t.vellum.handler;
    host = createServer((req, res) =>
      middleware(req, res, () => {
        res.setHeader("content-type", "text/plain");
        res.end("host app");
      }),
    );
    const base = await listenOn(host);
    expect(await (await fetch(`${base}/somewhere/else`)).text()).toBe("host app");
    expect(await (await fetch(`${base}/api/v1/page?limit=5`)).json()).toEqual({ limit: 5 });
    const res = await fetch(`${base}/api/v1/echo`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(401);
  });
});

describe("standalone listen and graceful shutdown", () => {
  it("finishes a request in flight, then refuses new connections", async () => {
    t = await createTestVellum({ plugins: [probePlugin()], ready: false });
    const server = await t.vellum.listen({ port: 0, host: "127.0.0.1" });
    const inFlight = fetch(`${server.url}/api/v1/slow?ms=300`).then(async (r) => ({
      status: r.status,
      body: await r.json(),
    }));
    await new Promise((r) => setTimeout(r, 50));
    const closing = server.close();
    const result = await inFlight;
    expect(result).toEqual({ status: 200, body: { slept: 300 } });
    await closing;
    expect(t.vellum.state()).toBe("closed");
    await expect(fetch(`${server.url}/api/v1/page`)).rejects.toThrow();
  });

  it("answers 503 to new requests on an open connection while closing", async () => {
    t = await createTestVellum({ plugins: [probePlugin()], config: { shutdownTimeoutMs: 2000 } });
    const slow = t.fetch("/api/v1/slow?ms=200");
    await new Promise((r) => setTimeout(r, 20));
    const closing = t.vellum.close();
    const during = await t.fetch("/api/v1/page");
    expect(during.status).toBe(503);
    expect((await slow).status).toBe(200);
    await closing;
  });
});

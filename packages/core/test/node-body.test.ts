import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { VellumServer } from "../src/node/listen.js";
import { createTestVellum, type TestVellum } from "../src/testing/index.js";
import { probePlugin } from "./fixtures/probe-plugin.js";

/**
 * JSON bodies read straight from the Node request stream (the path `listen()` and `handler`
 * take): the same answers as through `fetch`, over a real socket.
 */
let t: TestVellum;
let server: VellumServer;
let headers: Record<string, string>;

beforeEach(async () => {
  t = await createTestVellum({ plugins: [probePlugin()] });
  server = await t.vellum.listen({ port: 0, host: "127.0.0.1", signals: false });
  headers = { ...(await t.writeHeaders()), "content-type": "application/json" };
});

afterEach(async () => {
  await server.close();
  await t.close();
});

/** Sends `chunks` as a chunked body (no Content-Length), pausing between them. */
function sendChunked(chunks: string[], pauseMs = 0): Promise<{ status: number; body: string }> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path: "/api/v1/echo", method: "POST", headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    let i = 0;
    const next = () => {
      if (i === chunks.length) return void req.end();
      const chunk = chunks[i++] as string;
      if (req.destroyed) return;
      req.write(chunk, () => setTimeout(next, pauseMs));
    };
    next();
  });
}

describe("JSON bodies over a Node socket", () => {
  it("reads a body that arrives in several chunks", async () => {
    const res = await sendChunked(['{"title":', '"in ', 'pieces"}'], 5);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ received: { title: "in pieces" } });
  });

  it("payload_too_large for a declared Content-Length over 2 MiB, before reading it", async () => {
    const res = await fetch(`${server.url}/api/v1/echo`, {
      method: "POST",
      headers,
      body: JSON.stringify({ x: "a".repeat(2 * 1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe("payload_too_large");
  });

  it("payload_too_large for a chunked body that passes 2 MiB while streaming", async () => {
    const res = await sendChunked(Array.from({ length: 40 }, () => "a".repeat(64 * 1024)));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe("payload_too_large");
  });

  it("invalid_json for bytes that are not UTF-8 JSON, and the server keeps serving", async () => {
    const res = await sendChunked(["\xff\xfe not json"]);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error.code).toBe("invalid_json");
    expect((await sendChunked(["{}"])).status).toBe(200);
  });

  it("a client that disconnects mid-body is not an internal error", async () => {
    const { port } = new URL(server.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({ host: "127.0.0.1", port, path: "/api/v1/echo", method: "POST", headers });
      req.on("error", () => resolve());
      req.write('{"partial": "bo', () => setTimeout(() => req.destroy(), 20));
      req.on("close", () => resolve());
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await sendChunked(['{"after":true}'])).status).toBe(200);
    expect(t.errors).toEqual([]);
  });

  it("a body a host app already read: its parsed object is used, otherwise invalid_json with the reason", async () => {
    const { createServer } = await import("node:http");
    const host = createServer((req, res) => {
      let text = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (text += chunk));
      req.on("end", () => {
        // What express.json() does: the parsed body on req.body (only for the /parsed path here).
        if (req.url?.endsWith("?parsed")) Object.assign(req, { body: JSON.parse(text) });
        t.vellum.handler(req, res, () => res.end("fell through"));
      });
    });
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = host.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}/api/v1/echo`;
      const parsed = await fetch(`${url}?parsed`, { method: "POST", headers, body: '{"via":"host"}' });
      expect(parsed.status).toBe(200);
      expect(await parsed.json()).toEqual({ received: { via: "host" } });
      const drained = await fetch(url, { method: "POST", headers, body: "{}" });
      expect(drained.status).toBe(400);
      const { error } = await drained.json();
      expect(error.code).toBe("invalid_json");
      expect(error.message).toContain("mount Vellum before body parsers");
    } finally {
      await new Promise((resolve) => host.close(resolve));
    }
  });
});

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ArticleInput,
  createClient,
  VellumApiError,
  type VellumClient,
  VellumError,
  VellumNetworkError,
} from "../src/index.js";
import { API_KEY, type Front, type RunningVellum, startFront, startVellum } from "./support.js";

// Errors typed from the envelope, from what a proxy in front answers instead, and from no answer at all.

let server: RunningVellum;
let front: Front;
let client: VellumClient;

beforeAll(async () => {
  server = await startVellum();
  front = await startFront(server);
  client = createClient({ baseUrl: server.url, apiKey: API_KEY });
});

afterAll(async () => {
  await front?.close();
  await server?.close();
});

/** The rejection of `work`, which must be one. */
async function failure(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => expect.fail("expected a rejection"),
    (error: unknown) => error,
  );
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

describe("errors from the service's envelope", () => {
  it("404 not_found", async () => {
    const error = await failure(client.articles.get("missing"));
    expect(error).toBeInstanceOf(VellumApiError);
    expect(error).toBeInstanceOf(VellumError);
    expect(error).toMatchObject({
      name: "VellumApiError",
      status: 404,
      code: "not_found",
      message: "No such article.",
      requestId: expect.stringMatching(REQUEST_ID),
      docs: "/docs/api/errors#not_found",
      details: undefined,
      retryAfter: undefined,
    });
    await expect(client.jobs.get("01ARZ3NDEKTSV4RRFFQ69G5FAV")).rejects.toMatchObject({
      status: 404,
      code: "not_found",
    });
  });

  it("400 validation_failed with the details of each field", async () => {
    const error = await failure(client.articles.create({ slug: "no-title", tags: "x" } as unknown as ArticleInput));
    expect(error).toMatchObject({
      status: 400,
      code: "validation_failed",
      details: [
        { field: "title", message: expect.any(String) },
        { field: "content", message: expect.any(String) },
        { field: "tags", message: expect.any(String) },
      ],
    });
  });

  it("400 for bad parameters and cursors", async () => {
    await expect(client.articles.page({ limit: 101 })).rejects.toMatchObject({ code: "invalid_parameter" });
    await expect(client.articles.page({ cursor: "forged" })).rejects.toMatchObject({ code: "invalid_cursor" });
    await expect(client.search({ q: "" })).rejects.toMatchObject({ status: 400, code: "invalid_parameter" });
  });

  it("401 unauthorized without a key and with a wrong one", async () => {
    const anonymous = createClient({ baseUrl: server.url });
    await expect(anonymous.cache.purge("x")).rejects.toMatchObject({ status: 401, code: "unauthorized" });
    const wrong = createClient({ baseUrl: server.url, apiKey: "not-the-key-0123456789abcdef" });
    await expect(wrong.articles.delete("x")).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("429 rate_limited carries retryAfter", async () => {
    for (let i = 0; i < 5; i++) await client.cache.purge("limited");
    const error = await failure(client.cache.purge("limited"));
    expect(error).toMatchObject({ status: 429, code: "rate_limited", retryAfter: expect.any(Number) });
    expect((error as VellumApiError).retryAfter).toBeGreaterThan(0);
  });
});

describe("what is not the service", () => {
  const through = (prefix: string) => createClient({ baseUrl: `${front.url}/${prefix}`, apiKey: API_KEY });

  it("a proxy's HTML error page is an unexpected_response with its status", async () => {
    const error = await failure(through("gateway").articles.get("anything"));
    expect(error).toBeInstanceOf(VellumApiError);
    expect(error).toMatchObject({ status: 502, code: "unexpected_response", requestId: null });
    expect((error as Error).message).toContain("text/html");
    expect((error as Error).message).not.toContain("<html>");
  });

  it("a 200 that is not JSON (a captive portal) is an unexpected_response, not a parse crash", async () => {
    await expect(through("portal").health()).rejects.toMatchObject({ status: 200, code: "unexpected_response" });
  });

  it("a JSON error that is not the envelope keeps the request id of the header", async () => {
    await expect(through("not-envelope").articles.page()).rejects.toMatchObject({
      status: 500,
      code: "unexpected_response",
      requestId: "edge-42",
    });
  });

  it("a write whose token cannot be fetched fails with the token request's error", async () => {
    await expect(through("gateway").cache.purge("x")).rejects.toMatchObject({
      status: 502,
      code: "unexpected_response",
    });
  });

  it("a body cut off mid-way is a network error", async () => {
    const error = await failure(through("reset").articles.page());
    expect(error).toBeInstanceOf(VellumNetworkError);
    expect(error).toMatchObject({ method: "GET", url: `${front.url}/reset/api/v1/articles` });
  });

  it("a refused connection is a network error with fetch's error as the cause", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const error = await failure(createClient({ baseUrl: `http://127.0.0.1:${port}` }).health());
    expect(error).toBeInstanceOf(VellumNetworkError);
    expect((error as VellumNetworkError).cause).toBeInstanceOf(TypeError);
  });

  it("an aborted request rejects with the signal's reason, not a network error", async () => {
    const reason = new Error("user left the page");
    const controller = new AbortController();
    controller.abort(reason);
    await expect(client.health({ signal: controller.signal })).rejects.toBe(reason);
    await expect(
      client.articles.create({ title: "t", slug: "t", content: "" }, { signal: controller.signal }),
    ).rejects.toBe(reason);
  });
});

describe("bad base URLs", () => {
  it("are refused when the client is made", () => {
    expect(() => createClient({ baseUrl: "/cms" })).toThrow(TypeError);
    expect(() => createClient({ baseUrl: "ftp://host/" })).toThrow(/http or https/);
    expect(() => createClient({ baseUrl: "http://host/cms?x=1" })).toThrow(/no query/);
  });
});

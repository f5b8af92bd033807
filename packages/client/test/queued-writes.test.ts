import { sql } from "@vellum/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type VellumClient, VellumJobFailedError, VellumTimeoutError } from "../src/index.js";
import { API_KEY, recordingFetch, type RunningVellum, startVellum } from "./support.js";

// Waiting for queued creates: applied, failed after its retries, still queued at the timeout, abandoned.

let server: RunningVellum;
let client: VellumClient;
const recorder = recordingFetch();

beforeAll(async () => {
  // Creates of slugs starting with `poison` fail in the articles plugin's own insert, so they go through the real
  // retry path: about 300 ms, then 600 ms (±25 %), then the dead-letter queue.
  server = await startVellum({ config: { pluginOptions: { articles: { retryBaseMs: 300, maxAttempts: 3 } } } });
  await sql`CREATE TRIGGER test_poison BEFORE INSERT ON articles_items WHEN NEW.slug LIKE 'poison%'
    BEGIN SELECT RAISE(ABORT, 'disk sector 7'); END`.execute(server.vellum.db());
  client = createClient({ baseUrl: server.url, apiKey: API_KEY, fetch: recorder.fetch });
});

afterAll(async () => {
  await server?.close();
});

const article = (slug: string) => ({ title: slug, slug, content: `<p>${slug}</p>` });
const polls = (id: string) => recorder.paths().filter((p) => p === `GET /api/v1/jobs/${id}`).length;

describe("queued writes", () => {
  it("jobs.wait resolves with the applied job", async () => {
    const { id } = await client.articles.create(article("waited"));
    expect(await client.jobs.wait(id)).toEqual({ id, status: "applied" });
  });

  it("applied() throws VellumJobFailedError once the write is dead-lettered, polling with backoff", async () => {
    const started = Date.now();
    const queued = client.articles.create(article("poison-pill"));
    const error = await queued.applied({ timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VellumJobFailedError);
    const { id } = await queued;
    expect(error).toMatchObject({ jobId: id, code: "internal_error", message: expect.stringContaining("dead-letter") });
    expect((error as Error).message).not.toContain("sector");
    // Doubling from 25 ms: a handful of polls over the retries, not one every 25 ms.
    const elapsed = Date.now() - started;
    expect(polls(id)).toBeGreaterThan(2);
    expect(polls(id)).toBeLessThanOrEqual(3 + Math.log2(elapsed / 25));
    await expect(client.articles.get("poison-pill")).rejects.toMatchObject({ code: "not_found" });
  });

  it("applied() gives up with VellumTimeoutError while the write is still being retried", async () => {
    const queued = client.articles.create(article("poison-slow"));
    const error = await queued.applied({ timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VellumTimeoutError);
    const { id } = await queued;
    expect(error).toMatchObject({ jobId: id, timeoutMs: 100 });
    expect(await client.jobs.get(id)).toMatchObject({ status: "queued", error: { code: "internal_error" } });
  });

  it("applied() stops when its signal aborts, with the signal's reason", async () => {
    const reason = new Error("navigated away");
    const controller = new AbortController();
    setTimeout(() => controller.abort(reason), 100);
    await expect(
      client.articles.create(article("poison-abandoned")).applied({ signal: controller.signal }),
    ).rejects.toBe(reason);
  });

  it("applied() of a create the service refused rejects with that refusal", async () => {
    await client.articles.create(article("taken")).applied();
    await expect(client.articles.create(article("taken")).applied()).rejects.toMatchObject({
      status: 409,
      code: "slug_conflict",
    });
  });
});

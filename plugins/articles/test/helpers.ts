import type { ArticleRecord } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { expect } from "vitest";
import { type ArticlesOptions, articles } from "../src/index.js";

export const ARTICLES = "/api/v1/articles";

/** Fast retries so dead-letter tests finish quickly. */
export const TEST_OPTIONS: Partial<ArticlesOptions> = { retryBaseMs: 5 };

export async function bootArticles(options: Partial<ArticlesOptions> = TEST_OPTIONS): Promise<TestVellum> {
  return createTestVellum({ plugins: [articles(options)] });
}

export function articleBody(slug: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { title: `Title of ${slug}`, slug, content: `<p>Body of ${slug}</p>`, tags: ["news"], ...extra };
}

export async function post(t: TestVellum, json: unknown): Promise<Response> {
  return t.fetch(ARTICLES, { method: "POST", json, headers: await t.writeHeaders() });
}

export async function put(t: TestVellum, slug: string, json: unknown): Promise<Response> {
  return t.fetch(`${ARTICLES}/${slug}`, { method: "PUT", json, headers: await t.writeHeaders() });
}

export async function del(t: TestVellum, slug: string): Promise<Response> {
  return t.fetch(`${ARTICLES}/${slug}`, { method: "DELETE", headers: await t.writeHeaders() });
}

export async function jobStatus(
  t: TestVellum,
  id: string,
): Promise<{ id: string; status: string; error?: { code: string; message: string } }> {
  const res = await t.fetch(`/api/v1/jobs/${id}`);
  expect(res.status).toBe(200);
  return res.json();
}

/** Polls the job route until the job leaves `queued`; returns its final body. */
export async function waitForJob(t: TestVellum, id: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = await jobStatus(t, id);
    if (body.status !== "queued") return body;
    if (Date.now() > deadline) throw new Error(`job ${id} still queued after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** POSTs an article, asserts the 202 and waits until it is applied. */
export async function create(t: TestVellum, slug: string, extra: Record<string, unknown> = {}): Promise<ArticleRecord> {
  const res = await post(t, articleBody(slug, extra));
  expect(res.status).toBe(202);
  const { id } = (await res.json()) as { id: string };
  expect(await waitForJob(t, id)).toEqual({ id, status: "applied" });
  const got = await t.fetch(`${ARTICLES}/${slug}`);
  expect(got.status).toBe(200);
  return got.json();
}

export async function errorOf(res: Response): Promise<{ status: number; code: string; details?: unknown }> {
  const body = (await res.json()) as { error: { code: string; details?: unknown } };
  return { status: res.status, code: body.error.code, details: body.error.details };
}

/** Rows in the kernel's queue table for the articles queue (to prove nothing was queued). */
export async function queuedJobCount(t: TestVellum): Promise<number> {
  const stats = await t.vellum.queue().stats();
  const row = await t.vellum
    .db()
    .selectFrom("_vellum_jobs")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("queue", "=", "articles")
    .executeTakeFirstOrThrow();
  expect(stats.every((s) => s.queue !== "articles" || s.queued + s.failed <= Number(row.n))).toBe(true);
  return Number(row.n);
}

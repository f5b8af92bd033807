import type { ArticleRecord } from "@vellum/core";
import type { TestVellum } from "@vellum/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ARTICLES,
  articleBody,
  bootArticles,
  create,
  del,
  errorOf,
  jobStatus,
  post,
  put,
  queuedJobCount,
  waitForJob,
} from "./helpers.js";

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe("articles routes", () => {
  let t: TestVellum;

  beforeEach(async () => {
    t = await bootArticles();
  });

  afterEach(async () => {
    expect(t.errors).toEqual([]);
    await t.close();
  });

  it("POST answers 202 with the id, status queued and Location once the create is durable", async () => {
    const res = await post(t, articleBody("first-post"));
    expect(res.status).toBe(202);
    expect(res.headers.get("location")).toBe(`${ARTICLES}/first-post`);
    const body = await res.json();
    expect(body).toEqual({ id: expect.stringMatching(ULID), status: "queued" });
    const job = await t.vellum.queue().get(body.id);
    expect(job).toMatchObject({ queue: "articles", type: "article.create" });
    expect(await waitForJob(t, body.id)).toEqual({ id: body.id, status: "applied" });
  });

  it("job status goes queued → applied", async () => {
    await t.vellum.queue().stop();
    const res = await post(t, articleBody("queued-then-applied"));
    const { id } = await res.json();
    expect(await jobStatus(t, id)).toEqual({ id, status: "queued" });
    expect(await jobStatus(t, id)).toEqual({ id, status: "queued" });
    t.vellum.queue().start();
    expect(await waitForJob(t, id)).toEqual({ id, status: "applied" });
  });

  it("GET returns the full article; the list carries no content", async () => {
    const article = await create(t, "full-article", { tags: ["a", "b"] });
    expect(article).toEqual({
      id: expect.stringMatching(ULID),
      title: "Title of full-article",
      slug: "full-article",
      content: "<p>Body of full-article</p>",
      tags: ["a", "b"],
      created_at: expect.stringMatching(ISO_MS),
      updated_at: article.created_at,
    });
    const list = await (await t.fetch(ARTICLES)).json();
    const { content: _content, ...summary } = article;
    expect(list).toEqual({ articles: [summary], next_cursor: null });
  });

  it("tags are trimmed, deduplicated in order, and the title is trimmed", async () => {
    const article = await create(t, "tidy", { title: "  Tidy  ", tags: [" b ", "a", "b", "a "] });
    expect(article.title).toBe("Tidy");
    expect(article.tags).toEqual(["b", "a"]);
  });

  it("GET of an unknown slug is 404 not_found; a malformed slug in the path is invalid_slug", async () => {
    expect(await errorOf(await t.fetch(`${ARTICLES}/nope`))).toMatchObject({ status: 404, code: "not_found" });
    expect(await errorOf(await t.fetch(`${ARTICLES}/Not%20Valid`))).toMatchObject({
      status: 400,
      code: "invalid_slug",
    });
    expect(await errorOf(await t.fetch(`${ARTICLES}/${"a".repeat(201)}`))).toMatchObject({ code: "invalid_slug" });
  });

  it("GET of a slug whose create is still queued applies it first", async () => {
    await t.vellum.queue().stop();
    const { id } = await (await post(t, articleBody("read-your-write"))).json();
    const res = await t.fetch(`${ARTICLES}/read-your-write`);
    expect(res.status).toBe(200);
    expect((await res.json()).id).toBe(id);
    expect(await jobStatus(t, id)).toEqual({ id, status: "applied" });
    t.vellum.queue().start();
    await waitForJob(t, id);
    expect(await t.vellum.service("articles")?.count()).toBe(1);
  });

  it("PUT right after POST (before the worker ran) succeeds and the create is applied once", async () => {
    await t.vellum.queue().stop();
    const accepted = await (await post(t, articleBody("put-early"))).json();
    const res = await put(t, "put-early", { title: "Changed before the worker ran" });
    expect(res.status).toBe(200);
    const updated = await res.json();
    expect(updated).toMatchObject({ id: accepted.id, slug: "put-early", title: "Changed before the worker ran" });
    t.vellum.queue().start();
    expect(await waitForJob(t, accepted.id)).toEqual({ id: accepted.id, status: "applied" });
    const got = await (await t.fetch(`${ARTICLES}/put-early`)).json();
    expect(got.title).toBe("Changed before the worker ran");
    expect(await t.vellum.service("articles")?.count()).toBe(1);
  });

  it("PUT is partial: omitted fields keep their values; updated_at moves, created_at does not", async () => {
    const before = await create(t, "partial", { tags: ["x"] });
    const res = await put(t, "partial", { content: "<p>new <em>body</em></p>" });
    expect(res.status).toBe(200);
    const after = (await res.json()) as ArticleRecord;
    expect(after).toEqual({
      ...before,
      content: "<p>new <em>body</em></p>",
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(after.created_at).toBe(before.created_at);
    expect(after.updated_at > before.updated_at).toBe(true);
    expect(await (await t.fetch(`${ARTICLES}/partial`)).json()).toEqual(after);
  });

  it("PUT sanitizes content and replaces tags", async () => {
    await create(t, "replace-tags", { tags: ["old", "keep"] });
    const res = await put(t, "replace-tags", {
      tags: ["keep", "new"],
      content: "<p onclick=x()>hi</p><script>1</script>",
    });
    const after = await res.json();
    expect(after.tags).toEqual(["keep", "new"]);
    expect(after.content).toBe("<p>hi</p>");
    const old = await (await t.fetch(`${ARTICLES}?tag=old`)).json();
    expect(old.articles).toEqual([]);
    const fresh = await (await t.fetch(`${ARTICLES}?tag=new`)).json();
    expect(fresh.articles.map((a: ArticleRecord) => a.slug)).toEqual(["replace-tags"]);
  });

  it("PUT with a new slug renames; the old slug is then 404", async () => {
    const before = await create(t, "old-name");
    const res = await put(t, "old-name", { slug: "new-name" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: before.id, slug: "new-name" });
    expect((await t.fetch(`${ARTICLES}/old-name`)).status).toBe(404);
    expect((await t.fetch(`${ARTICLES}/new-name`)).status).toBe(200);
  });

  it("a rename onto a taken or queued slug is 409 slug_conflict and changes nothing", async () => {
    await create(t, "taken");
    await create(t, "mover");
    expect(await errorOf(await put(t, "mover", { slug: "taken" }))).toMatchObject({
      status: 409,
      code: "slug_conflict",
    });
    await t.vellum.queue().stop();
    expect((await post(t, articleBody("queued-slug"))).status).toBe(202);
    expect(await errorOf(await put(t, "mover", { slug: "queued-slug" }))).toMatchObject({ code: "slug_conflict" });
    t.vellum.queue().start();
    expect((await t.fetch(`${ARTICLES}/mover`)).status).toBe(200);
  });

  it("PUT of an unknown slug is 404; a PUT that changes nothing returns the article untouched", async () => {
    expect(await errorOf(await put(t, "ghost", { title: "x" }))).toMatchObject({ status: 404, code: "not_found" });
    const before = await create(t, "same");
    const res = await put(t, "same", { title: before.title, tags: before.tags });
    expect(await res.json()).toEqual(before);
  });

  it("DELETE answers 204; then GET is 404 and a second DELETE is 404", async () => {
    await create(t, "doomed");
    const res = await del(t, "doomed");
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await t.fetch(`${ARTICLES}/doomed`)).status).toBe(404);
    expect(await errorOf(await del(t, "doomed"))).toMatchObject({ status: 404, code: "not_found" });
    expect((await t.fetch(ARTICLES)).status).toBe(200);
    expect((await (await t.fetch(ARTICLES)).json()).articles).toEqual([]);
  });

  it("DELETE of a slug whose create is still queued deletes it (never 404); the slug is free again", async () => {
    await t.vellum.queue().stop();
    const { id } = await (await post(t, articleBody("short-lived"))).json();
    expect((await del(t, "short-lived")).status).toBe(204);
    t.vellum.queue().start();
    expect(await waitForJob(t, id)).toEqual({ id, status: "applied" });
    expect((await t.fetch(`${ARTICLES}/short-lived`)).status).toBe(404);
    expect(await t.vellum.service("articles")?.count()).toBe(0);
    await create(t, "short-lived");
  });

  it("POST of an existing or queued slug is 409 slug_conflict and queues nothing", async () => {
    await create(t, "dup");
    const jobs = await queuedJobCount(t);
    expect(await errorOf(await post(t, articleBody("dup")))).toMatchObject({ status: 409, code: "slug_conflict" });
    await t.vellum.queue().stop();
    expect((await post(t, articleBody("dup-queued"))).status).toBe(202);
    expect(await errorOf(await post(t, articleBody("dup-queued")))).toMatchObject({ code: "slug_conflict" });
    expect(await queuedJobCount(t)).toBe(jobs + 1);
    t.vellum.queue().start();
  });

  it("concurrent POSTs of one slug: exactly one is accepted", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => post(t, articleBody("race"))));
    expect(results.map((r) => r.status).sort()).toEqual([202, ...Array(9).fill(409)]);
  });

  it("writes need the API key and the CSRF token", async () => {
    const json = articleBody("guarded");
    expect((await t.fetch(ARTICLES, { method: "POST", json })).status).toBe(401);
    const headers = await t.writeHeaders();
    const noCsrf = { authorization: headers.authorization as string };
    expect((await t.fetch(ARTICLES, { method: "POST", json, headers: noCsrf })).status).toBe(403);
    expect((await t.fetch(`${ARTICLES}/guarded`, { method: "DELETE", headers: noCsrf })).status).toBe(403);
  });

  it("GET /api/v1/jobs/:id is 404 for unknown and malformed ids", async () => {
    expect(await errorOf(await t.fetch("/api/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV"))).toMatchObject({
      status: 404,
      code: "not_found",
    });
    expect((await t.fetch("/api/v1/jobs/not-a-job")).status).toBe(404);
  });

  it("a create whose job was pruned still reports applied", async () => {
    const article = await create(t, "pruned");
    await t.vellum.db().deleteFrom("_vellum_jobs").where("id", "=", article.id).execute();
    expect(await jobStatus(t, article.id)).toEqual({ id: article.id, status: "applied" });
  });

  it("the articles service reads what the routes wrote", async () => {
    const a = await create(t, "svc-a");
    const b = await create(t, "svc-b");
    const service = t.vellum.service("articles");
    if (!service) throw new Error("articles service missing");
    expect(await service.getBySlug("svc-a")).toEqual(a);
    expect(await service.getById(b.id)).toEqual(b);
    expect(await service.getById("01ARZ3NDEKTSV4RRFFQ69G5FAV")).toBeUndefined();
    expect(await service.count()).toBe(2);
    expect(await service.latestChange()).toBe(b.updated_at);
    const batches: string[][] = [];
    for await (const batch of service.iterate({ batchSize: 1 })) batches.push(batch.map((x) => x.slug));
    expect(batches).toEqual([["svc-a"], ["svc-b"]]);
    const rest: string[] = [];
    for await (const batch of service.iterate({ afterId: a.id })) rest.push(...batch.map((x) => x.slug));
    expect(rest).toEqual(["svc-b"]);
  });
});

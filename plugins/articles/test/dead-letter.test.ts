import { sql } from "@vellum/core";
import type { TestVellum } from "@vellum/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTICLES, articleBody, bootArticles, create, errorOf, jobStatus, post, put, waitForJob } from "./helpers.js";

/** The articles queue's sample of `service_dead_letter_queue_size`; it must be there, 0 when empty. */
async function deadLetterGauge(t: TestVellum): Promise<number> {
  const text = await t.vellum.metrics.registry.metrics();
  const line = text.split("\n").find((l) => l.startsWith('service_dead_letter_queue_size{queue="articles"}'));
  if (!line) throw new Error("no service_dead_letter_queue_size sample for the articles queue");
  return Number(line.split(" ").at(-1));
}

/**
 * Test-only trigger: storing an article whose slug starts with `poison` fails in the articles
 * plugin's own statement, so the create fails through the real retry path (a failure of another
 * plugin's subscriber would be isolated instead). The message stands for internal detail that
 * must never reach a client.
 */
async function poisonSlugs(t: TestVellum): Promise<() => Promise<void>> {
  await sql`CREATE TRIGGER test_poison BEFORE INSERT ON articles_items WHEN NEW.slug LIKE 'poison%'
    BEGIN SELECT RAISE(ABORT, 'disk sector 7 of /srv/secret.db'); END`.execute(t.vellum.db());
  return async () => {
    await sql`DROP TRIGGER test_poison`.execute(t.vellum.db());
  };
}

const genericFailure = {
  code: "internal_error",
  message: "The write failed after its retries and is in the dead-letter queue; the error was logged.",
};

describe("failed creates: retries, then the dead-letter queue", () => {
  let t: TestVellum;
  let off: () => Promise<void>;

  beforeEach(async () => {
    t = await bootArticles({ retryBaseMs: 5, maxAttempts: 4 });
    off = await poisonSlugs(t);
  });

  afterEach(async () => {
    await t.close();
  });

  it("retries a failing create, then marks it failed with the error and counts it in service_dead_letter_queue_size", async () => {
    expect(await deadLetterGauge(t)).toBe(0);
    const poison = await (await post(t, articleBody("poison"))).json();
    const behind = await (await post(t, articleBody("behind-the-poison"))).json();

    const status = await waitForJob(t, poison.id);
    expect(status).toEqual({ id: poison.id, status: "failed", error: genericFailure });
    expect(JSON.stringify(status)).not.toContain("secret");
    expect(await t.vellum.queue().get(poison.id)).toMatchObject({
      status: "failed",
      attempts: 4,
      last_error: expect.stringContaining("disk sector 7"),
    });
    expect(await deadLetterGauge(t)).toBe(1);
    expect(t.errors).toMatchObject([
      { plugin: "articles", error: { message: expect.stringContaining("disk sector 7") } },
    ]);

    expect(await waitForJob(t, behind.id)).toEqual({ id: behind.id, status: "applied" });
    expect((await t.fetch(`${ARTICLES}/behind-the-poison`)).status).toBe(200);
  });

  it("a dead create's slug answers 404, and a new create may take the slug; replaying the dead one then does nothing", async () => {
    const dead = await (await post(t, articleBody("poison-slug"))).json();
    await waitForJob(t, dead.id);
    expect((await t.fetch(`${ARTICLES}/poison-slug`)).status).toBe(404);
    expect(await errorOf(await put(t, "poison-slug", { title: "x" }))).toMatchObject({ code: "not_found" });

    await off();
    const again = await create(t, "poison-slug", { title: "Second try" });
    expect(again.id).not.toBe(dead.id);
    expect(await jobStatus(t, dead.id)).toMatchObject({ status: "failed" });

    expect(await t.vellum.queue().replay("articles")).toBe(1);
    expect(await waitForJob(t, dead.id)).toEqual({ id: dead.id, status: "applied" });
    expect(await deadLetterGauge(t)).toBe(0);
    const only = await (await t.fetch(`${ARTICLES}/poison-slug`)).json();
    expect(only).toMatchObject({ id: again.id, title: "Second try" });
    expect(await t.vellum.service("articles")?.count()).toBe(1);
  });

  it("a replayed dead create whose slug is still free is applied", async () => {
    const dead = await (await post(t, articleBody("poison-later"))).json();
    await waitForJob(t, dead.id);
    await off();
    expect(await t.vellum.queue().replay("articles", { ids: [dead.id] })).toBe(1);
    expect(await waitForJob(t, dead.id)).toEqual({ id: dead.id, status: "applied" });
    expect((await (await t.fetch(`${ARTICLES}/poison-later`)).json()).id).toBe(dead.id);
  });
});

describe("order per slug: a poisoned create delays only its own slug", () => {
  it("creates of other slugs are applied while it waits for its retries", async () => {
    const t = await bootArticles({ retryBaseMs: 60_000, maxAttempts: 3 });
    try {
      await poisonSlugs(t);
      const poison = await (await post(t, articleBody("poison-first"))).json();
      const behind = await (await post(t, articleBody("right-behind"))).json();
      expect(await waitForJob(t, behind.id)).toEqual({ id: behind.id, status: "applied" });
      expect(await jobStatus(t, poison.id)).toEqual({
        id: poison.id,
        status: "queued",
        error: {
          code: "internal_error",
          message: "The last attempt failed and the write will be retried; the error was logged.",
        },
      });
      expect((await t.fetch(`${ARTICLES}/right-behind`)).status).toBe(200);
      t.errors.splice(0);
    } finally {
      await t.close();
    }
  });

  it("reads of its slug do not retry it at request rate: it waits for the worker's backoff", async () => {
    const t = await bootArticles({ retryBaseMs: 60_000, maxAttempts: 3 });
    try {
      const cure = await poisonSlugs(t);
      const poison = await (await post(t, articleBody("poison-read"))).json();
      for (let i = 0; i < 200 && (await t.vellum.queue().get(poison.id))?.attempts === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // The cause is gone now: a read that applied the create at once would find it stored.
      await cure();
      for (let i = 0; i < 20; i++) expect((await t.fetch(`${ARTICLES}/poison-read`)).status).toBe(404);
      expect(await t.vellum.queue().get(poison.id)).toMatchObject({ status: "queued", attempts: 1 });
      t.errors.splice(0);
    } finally {
      await t.close();
    }
  });
});

describe("back-pressure", () => {
  it("refuses creates with 503 and Retry-After while maxQueued creates wait, and counts the refusals", async () => {
    const t = await bootArticles({ retryBaseMs: 60_000, maxAttempts: 3, maxQueued: 3 });
    try {
      await poisonSlugs(t);
      for (const n of [1, 2, 3]) expect((await post(t, articleBody(`poison-wait-${n}`))).status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 150));
      const refused = await post(t, articleBody("one-too-many"));
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect((await refused.json()).error.code).toBe("service_unavailable");
      const metrics = await t.vellum.metrics.registry.getSingleMetricAsString("service_articles_create_refusals_total");
      expect(metrics).toContain("service_articles_create_refusals_total 1");
      expect((await t.fetch(`${ARTICLES}/one-too-many`)).status).toBe(404);
      t.errors.splice(0);
    } finally {
      await t.close();
    }
  });
});

import type { TestVellum } from "@vellum/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTICLES, articleBody, bootArticles, create, errorOf, jobStatus, post, put, waitForJob } from "./helpers.js";

async function deadLetterGauge(t: TestVellum): Promise<number> {
  const text = await t.vellum.metrics.registry.metrics();
  const line = text.split("\n").find((l) => l.startsWith('service_dead_letter_queue_size{queue="articles"}'));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("failed creates: retries, then the dead-letter queue", () => {
  let t: TestVellum;
  let attempts: number;
  let off: () => void;

  beforeEach(async () => {
    t = await bootArticles({ retryBaseMs: 5, maxAttempts: 4 });
    attempts = 0;
    // Test-only subscriber: the poisoned article fails in its transaction, through the real retry path.
    off = t.vellum.hooks.hook("article:commit", ({ article }) => {
      if (article.slug.startsWith("poison")) {
        attempts++;
        throw new Error(`cannot index ${article.slug}`);
      }
    });
  });

  afterEach(async () => {
    await t.close();
  });

  it("retries a failing create, then marks it failed with the error and counts it in service_dead_letter_queue_size", async () => {
    expect(await deadLetterGauge(t)).toBe(0);
    const poison = await (await post(t, articleBody("poison"))).json();
    const behind = await (await post(t, articleBody("behind-the-poison"))).json();

    expect(await waitForJob(t, poison.id)).toEqual({ id: poison.id, status: "failed", error: "cannot index poison" });
    expect(attempts).toBe(4);
    expect(await t.vellum.queue().get(poison.id)).toMatchObject({ status: "failed", attempts: 4 });
    expect(await deadLetterGauge(t)).toBe(1);
    expect(t.errors).toMatchObject([{ plugin: "queue", error: { message: "cannot index poison" } }]);

    expect(await waitForJob(t, behind.id)).toEqual({ id: behind.id, status: "applied" });
    expect((await t.fetch(`${ARTICLES}/behind-the-poison`)).status).toBe(200);
  });

  it("a dead create's slug answers 404, and a new create may take the slug; replaying the dead one then does nothing", async () => {
    const dead = await (await post(t, articleBody("poison-slug"))).json();
    await waitForJob(t, dead.id);
    expect((await t.fetch(`${ARTICLES}/poison-slug`)).status).toBe(404);
    expect(await errorOf(await put(t, "poison-slug", { title: "x" }))).toMatchObject({ code: "not_found" });

    off();
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
    off();
    expect(await t.vellum.queue().replay("articles", [dead.id])).toBe(1);
    expect(await waitForJob(t, dead.id)).toEqual({ id: dead.id, status: "applied" });
    expect((await (await t.fetch(`${ARTICLES}/poison-later`)).json()).id).toBe(dead.id);
  });
});

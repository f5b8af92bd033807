import { afterEach, describe, expect, it } from "vitest";
import { article, boot, type Harness } from "./helpers.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.t.close();
  h = undefined;
});

async function seed(harness: Harness): Promise<void> {
  const sky = ["telescope", "nebula", "galaxy", "orbit", "comet", "planet"];
  const food = ["recipe", "oven", "flour", "butter", "simmer", "spice"];
  for (let i = 0; i < 4; i++) {
    const words = sky.slice(i % 3, (i % 3) + 4).join(" ");
    await harness.articles.create(
      article(`sky-${i}`, `Sky notes ${i}`, `<p>Tonight the ${words} and more ${words}.</p>`, ["astronomy"]),
    );
    const dish = food.slice(i % 3, (i % 3) + 4).join(" ");
    await harness.articles.create(
      article(`food-${i}`, `Kitchen ${i}`, `<p>Start with ${dish} then ${dish}.</p>`, ["cooking"]),
    );
  }
  await harness.articles.create(article("misc", "Misc", "<p>Nothing in common here at all.</p>", ["misc"]));
}

describe("beta ai endpoints", () => {
  it("do not exist unless SERVICE_FEATURES has ai", async () => {
    h = await boot();
    expect((await h.t.fetch("/api/v1/ai/related/anything")).status).toBe(404);
    const res = await h.t.fetch("/api/v1/ai/suggest-tags", {
      method: "POST",
      headers: await h.t.writeHeaders(),
      json: { content: "x" },
    });
    expect(res.status).toBe(404);
  });

  it("find related articles by the index's terms", async () => {
    h = await boot({ features: ["ai"] });
    await seed(h);
    const res = await h.t.fetch("/api/v1/ai/related/sky-0?limit=3");
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.slug).toBe("sky-0");
    expect(body.terms.length).toBeGreaterThan(0);
    expect(body.results).toHaveLength(3);
    for (const r of body.results) {
      expect(r.slug).toMatch(/^sky-[1-3]$/);
      expect(r).toEqual({
        id: expect.any(String),
        slug: r.slug,
        title: expect.any(String),
        tags: ["astronomy"],
        score: expect.any(Number),
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
    }
    expect((await h.t.fetch("/api/v1/ai/related/nope")).status).toBe(404);
    const bad = await h.t.fetch("/api/v1/ai/related/Not%20A%20Slug");
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe("invalid_slug");
    expect((await h.t.fetch("/api/v1/ai/related/sky-0?limit=0")).status).toBe(400);
  });

  it("suggest existing tags for a text, best first", async () => {
    h = await boot({ features: ["ai"] });
    await seed(h);
    const harness = h;
    const post = async (json: unknown) =>
      harness.t.fetch("/api/v1/ai/suggest-tags", { method: "POST", headers: await harness.t.writeHeaders(), json });
    const res = await post({
      title: "A night out",
      content: "<p>The comet passed the planet; my telescope saw a nebula.</p>",
    });
    expect(res.status).toBe(200);
    const { tags } = await res.json();
    expect(tags[0]).toEqual({ tag: "astronomy", score: expect.any(Number) });
    expect(tags.map((t: { tag: string }) => t.tag)).not.toContain("misc");
    const excluded = await (await post({ content: "<p>comet planet telescope</p>", tags: ["Astronomy"] })).json();
    expect(excluded.tags.map((t: { tag: string }) => t.tag)).not.toContain("astronomy");
    const cooking = await (await post({ content: "<p>Mix the flour and butter, then the oven.</p>", limit: 1 })).json();
    expect(cooking.tags).toEqual([{ tag: "cooking", score: expect.any(Number) }]);
    const mentioned = await (await post({ content: "<p>Notes on cooking at home.</p>" })).json();
    expect(mentioned.tags[0].tag).toBe("cooking");
  });

  it("validate suggest-tags input and require the key", async () => {
    h = await boot({ features: ["ai"] });
    const headers = await h.t.writeHeaders();
    const bad = await h.t.fetch("/api/v1/ai/suggest-tags", { method: "POST", headers, json: { title: 3, limit: 99 } });
    expect(bad.status).toBe(400);
    const body = await bad.json();
    expect(body.error.code).toBe("validation_failed");
    expect(body.error.details.map((d: { field: string }) => d.field)).toEqual(["title", "limit"]);
    const empty = await h.t.fetch("/api/v1/ai/suggest-tags", { method: "POST", headers, json: {} });
    expect((await empty.json()).error.details).toEqual([{ field: "content", message: "title or content is required" }]);
    const anonymous = await h.t.fetch("/api/v1/ai/suggest-tags", { method: "POST", json: { content: "x" } });
    expect(anonymous.status).toBe(401);
  });
});

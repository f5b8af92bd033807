import { sql } from "@vellum/core";
import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { afterEach, expect, it } from "vitest";
import { defaultPlugins } from "../src/index.js";

// The default plugins together: a failing subscriber of another plugin (search) never fails or
// dead-letters an article; search degrades itself and says so.

let t: TestVellum | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function createArticle(vellum: TestVellum, slug: string): Promise<string> {
  const res = await vellum.fetch("/api/v1/articles", {
    method: "POST",
    json: { title: `Title of ${slug}`, slug, content: "<p>Words to index.</p>" },
    headers: await vellum.writeHeaders(),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

async function settled(vellum: TestVellum, id: string): Promise<{ status: string }> {
  for (let i = 0; i < 500; i++) {
    const body = (await (await vellum.fetch(`/api/v1/jobs/${id}`)).json()) as { status: string };
    if (body.status !== "queued") return body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`job ${id} still queued`);
}

it("a throwing search subscriber leaves the article applied and search degraded", async () => {
  t = await createTestVellum({
    plugins: defaultPlugins(),
    config: { pluginOptions: { search: { autoRepair: false } } },
  });
  const first = await createArticle(t, "indexed-first");
  expect(await settled(t, first)).toEqual({ id: first, status: "applied" });

  // Break search from outside its own guards: its generation table is gone, so its commit hook
  // throws before it can catch anything itself.
  await sql`ALTER TABLE search_generations RENAME TO search_generations_hidden`.execute(t.vellum.db());
  const second = await createArticle(t, "written-while-search-fails");

  expect(await settled(t, second)).toEqual({ id: second, status: "applied" });
  expect((await t.fetch("/api/v1/articles/written-while-search-fails")).status).toBe(200);
  expect(t.errors).toContainEqual(
    expect.objectContaining({ plugin: "search", hook: "article:commit", tags: expect.any(Object) }),
  );
  const health = (await (await t.fetch("/health")).json()) as { status: string; components?: Record<string, string> };
  expect(health.status).toBe("degraded");
  expect(health.components?.search).toBe("unavailable");
  const stats = await t.vellum.queue().stats();
  expect(stats.find((s) => s.queue === "articles")?.failed ?? 0).toBe(0);
  t.errors.splice(0);
});

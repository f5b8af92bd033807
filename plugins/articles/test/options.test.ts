import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestVellum } from "@vellum/core/testing";
import { describe, expect, it } from "vitest";
import { type ArticlesOptions, articles } from "../src/index.js";

describe("plugin options", () => {
  it.each<[Partial<ArticlesOptions>, string]>([
    [{ prefix: "api/articles" }, "prefix"],
    [{ prefix: "/api/articles/" }, "prefix"],
    [{ mediaPrefix: "media" }, "mediaPrefix"],
    [{ batchSize: 0 }, "batchSize"],
    [{ maxAttempts: 1.5 }, "maxAttempts"],
    [{ retryBaseMs: -1 }, "retryBaseMs"],
    [{ cursorSecret: "short" }, "cursorSecret"],
  ])("refuses %j at boot, naming %s", async (options, key) => {
    const dataDir = await mkdtemp(join(tmpdir(), "vellum-articles-options-"));
    try {
      await expect(createTestVellum({ plugins: [articles(options)], dataDir })).rejects.toMatchObject({
        code: "VELLUM_CONFIG_INVALID",
        message: expect.stringContaining(`pluginOptions.articles.${key}`),
      });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("serves under custom prefixes and signs cursors with a configured secret", async () => {
    const cursorSecret = "s".repeat(32);
    const t = await createTestVellum({
      plugins: [articles({ prefix: "/content/posts", cursorSecret, retryBaseMs: 5 })],
    });
    try {
      const headers = await t.writeHeaders();
      for (const slug of ["one", "two"]) {
        const res = await t.fetch("/content/posts", {
          method: "POST",
          json: { title: slug, slug, content: "<p>x</p>" },
          headers,
        });
        expect(res.status).toBe(202);
        expect(res.headers.get("location")).toBe(`/content/posts/${slug}`);
        const { id } = await res.json();
        for (let i = 0; i < 200 && (await (await t.fetch(`/api/v1/jobs/${id}`)).json()).status === "queued"; i++) {
          await new Promise((r) => setTimeout(r, 5));
        }
      }
      const page = await (await t.fetch("/content/posts?limit=1")).json();
      expect(page.articles.map((a: { slug: string }) => a.slug)).toEqual(["two"]);
      expect(page.next_cursor).toMatch(/^[0-9A-Z]{26}\.[A-Za-z0-9_-]{22}$/);
      expect((await t.fetch("/api/v1/articles")).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});

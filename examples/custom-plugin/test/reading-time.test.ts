import { createTestVellum, type TestVellum } from "@vellum/core/testing";
import { defaultPlugins } from "vellum";
import { afterAll, beforeAll, expect, it } from "vitest";
import { readingTime } from "../src/reading-time.js";

let t: TestVellum;
beforeAll(async () => {
  t = await createTestVellum({ plugins: [...defaultPlugins(), readingTime({ wordsPerMinute: 100 })] });
});
afterAll(() => t.close());

async function waitApplied(jobId: string) {
  for (let i = 0; i < 200; i++) {
    const job = await (await t.fetch(`/api/v1/jobs/${jobId}`)).json();
    if (job.status === "applied") return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`job ${jobId} was not applied`);
}

it("computes reading time in the article's transaction and serves it", async () => {
  const words = Array.from({ length: 450 }, (_, i) => `word${i}`).join(" ");
  const res = await t.fetch("/api/v1/articles", {
    method: "POST",
    json: { title: "Long read", slug: "long-read", content: `<p>${words}</p>` },
    headers: await t.writeHeaders(),
  });
  expect(res.status).toBe(202);
  await waitApplied((await res.json()).id);
  expect(await (await t.fetch("/api/v1/reading-time/long-read")).json()).toEqual({ slug: "long-read", minutes: 5 });

  const del = await t.fetch("/api/v1/articles/long-read", { method: "DELETE", headers: await t.writeHeaders() });
  expect(del.status).toBe(204);
  expect((await t.fetch("/api/v1/reading-time/long-read")).status).toBe(404);
  expect(await t.vellum.metrics.registry.getSingleMetricAsString("service_reading_time_computed_total")).toContain(
    "service_reading_time_computed_total 1",
  );
  expect(t.errors).toEqual([]);
});

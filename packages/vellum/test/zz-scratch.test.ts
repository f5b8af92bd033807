import { createTestVellum } from "@vellum/core/testing";
import { articles } from "@vellum/plugin-articles";
import { cache } from "@vellum/plugin-cache";
import { health } from "@vellum/plugin-health";
import { it } from "vitest";

it("scratch", async () => {
  const t = await createTestVellum({ plugins: [articles({ retryBaseMs: 5 } as never), cache({ maxEntries: 500, maxBytes: 256 * 1024, maxEntryBytes: 64 * 1024 }), health()] });
  const h = await t.writeHeaders();
  await t.fetch("/api/v1/articles", { method: "POST", json: { title: "Hello", slug: "hello", content: "<p>x</p>", tags: ["news"] }, headers: h });
  await new Promise((res) => setTimeout(res, 300));
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  for (let i = 0; i < 100_000; i++) {
    const r = await t.fetch(`/api/v1/articles?limit=1&n=${i}`);
    if (r.status !== 200) throw new Error(String(r.status));
    await r.arrayBuffer();
  }
  console.log("ms", performance.now() - t0, "rss MB", (process.memoryUsage().rss - rss0) / 1e6);
  console.log(await (await t.fetch("/health/cache")).text());
  console.log(await t.vellum.metrics.registry.getSingleMetricAsString("service_cache_evictions_total"));
  console.log(await t.vellum.metrics.registry.getSingleMetricAsString("service_cache_misses_total"));
  await t.close();
}, 120_000);

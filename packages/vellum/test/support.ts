import type { CommandIO } from "@vellum/core";
import type { TestVellum } from "@vellum/core/testing";
import { expect } from "vitest";

// Helpers every integration test of the default plugins uses: articles written through the API, waits, metrics.

export const ARTICLES = "/api/v1/articles";

/** Creates an article through the API and waits until the queue applied it, without reading it (no cache entry). */
export async function createArticle(t: TestVellum, slug: string, tags: string[] = []): Promise<void> {
  const body = { title: `Title of ${slug}`, slug, content: `<p>Body of ${slug}</p>`, tags };
  const res = await t.fetch(ARTICLES, { method: "POST", json: body, headers: await t.writeHeaders() });
  expect(res.status).toBe(202);
  const { id } = (await res.json()) as { id: string };
  await waitFor(async () => {
    const job = (await (await t.fetch(`/api/v1/jobs/${id}`)).json()) as { status: string };
    expect(job.status).not.toBe("failed");
    return job.status === "applied";
  }, `job ${id} applied`);
}

/** Polls `check` every 10 ms until it returns true (10 s at most). */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The sum of a metric's samples whose labels include `labels` (0 when it has none yet). */
export async function metric(t: TestVellum, name: string, labels: Record<string, string> = {}): Promise<number> {
  const found = t.vellum.metrics.registry.getSingleMetric(name);
  if (!found) return 0;
  const { values } = await found.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
    .reduce((sum, v) => sum + v.value, 0);
}

/** What a plugin command gets from the CLI, printing into `printed`, with `options` as flags. */
export function commandIO(printed: string[], options: CommandIO["options"] = {}): CommandIO {
  return { options, positionals: [], interactive: false, print: (line) => printed.push(line), progress() {} };
}

import type { Vellum } from "@vellum/core";
import { articles, solidPng } from "./content.js";

export interface SeedReport {
  /** Slugs created by this run. */
  created: string[];
  /** Slugs that were there already and were left as they are. */
  existing: string[];
  /** The seeded image's URL (the same bytes give the same item on every run). */
  image: string;
}

/**
 * Seeds the demo content through Vellum's own HTTP API, in-process. Safe to run again: an
 * article whose slug exists is left alone, and uploading the same image returns the stored item.
 * Resolves once every created article can be read (writes are queued).
 */
export async function seed(vellum: Pick<Vellum, "fetch">, apiKey: string): Promise<SeedReport> {
  const call = (path: string, init: RequestInit = {}) =>
    vellum.fetch(new Request(`http://playground.local${path}`, init), { clientAddress: "127.0.0.1" });
  const expect = async (response: Response, statuses: number[], what: string) => {
    if (!statuses.includes(response.status)) throw new Error(`${what}: ${response.status} ${await response.text()}`);
    return response;
  };

  const { token } = (await (await expect(await call("/api/v1/csrf"), [200], "csrf")).json()) as { token: string };
  const headers = { authorization: `Bearer ${apiKey}`, "x-csrf-token": token, cookie: `svc_csrf=${token}` };

  const form = new FormData();
  form.set("file", new Blob([new Uint8Array(solidPng(96, 64, [51, 102, 204]))], { type: "image/png" }), "square.png");
  const upload = await expect(
    await call("/api/v1/media", { method: "POST", body: form, headers }),
    [200, 201],
    "image",
  );
  const { url: image } = (await upload.json()) as { url: string };

  const report: SeedReport = { created: [], existing: [], image };
  for (const article of articles) {
    const found = await expect(await call(`/api/v1/articles/${article.slug}`), [200, 404], article.slug);
    if (found.status === 200) {
      report.existing.push(article.slug);
      continue;
    }
    const body = JSON.stringify({ ...article, content: article.content.replaceAll("{image}", image) });
    const init = { method: "POST", body, headers: { ...headers, "content-type": "application/json" } };
    await expect(await call("/api/v1/articles", init), [201, 202], article.slug);
    report.created.push(article.slug);
  }

  const deadline = Date.now() + 15_000;
  for (const slug of report.created) {
    while ((await call(`/api/v1/articles/${slug}`)).status !== 200) {
      if (Date.now() > deadline) throw new Error(`article ${slug} was accepted but is not readable after 15 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return report;
}

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Server, startServer, writeHeadersFor } from "./fuzz-support.js";
import { ARTICLES, waitFor } from "./support.js";

// Two `vellum serve` processes on one data directory (docs/operations.md, "Several processes on one
// database"): what each keeps in memory about the database follows what the other does. Before, a
// purge through `POST /api/v1/cache/purge` left the other process serving the purged pages from its
// response cache (the purge wrote nothing, so its `data_version` did not move), and a process that
// took no uploads reported the media total it had at start in `/health/storage`.

const API_KEY = "shared-process-state-api-key-0123";

let dir: string;
let writer: Server;
let reader: Server;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "vellum-shared-state-"));
  const env = { SERVICE_DATA_DIR: join(dir, "data"), SERVICE_API_KEY: API_KEY };
  [writer, reader] = await Promise.all([startServer(dir, env), startServer(dir, env)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([writer?.stop(), reader?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

/** The sum of the samples of counter `name` whose labels include `label` (`reason="fresh"`), from `/metrics`. */
async function scrape(server: Server, name: string, label: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  let sum = 0;
  for (const [, labels, value] of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, "gm")))
    if (labels?.split(",").includes(label)) sum += Number(value);
  return sum;
}

const hits = (server: Server) => scrape(server, "service_cache_hits_total", 'reason="fresh"');

describe("two vellum serve processes on one data directory", () => {
  it("a purge through one drops the purged pages from the other's response cache", async () => {
    const created = await fetch(`${writer.url}${ARTICLES}`, {
      method: "POST",
      headers: await writeHeadersFor(writer.url, API_KEY),
      body: JSON.stringify({ title: "Purged", slug: "purged", content: "<p>Purged</p>" }),
    });
    expect(created.status).toBe(202);
    const page = `${reader.url}${ARTICLES}/purged`;
    await waitFor(async () => (await fetch(page)).status === 200, "the article, read from the other process");
    // Held by the reader once nothing writes any more: two reads in a row are both hits.
    await waitFor(async () => {
      const before = await hits(reader);
      await fetch(page);
      await fetch(page);
      return (await hits(reader)) === before + 2;
    }, "the page held by the reader");

    const purged = await fetch(`${writer.url}/api/v1/cache/purge`, {
      method: "POST",
      headers: await writeHeadersFor(writer.url, API_KEY),
      body: JSON.stringify({ slug: "purged" }),
    });
    expect(purged.status).toBe(200);

    const before = await hits(reader);
    const dropped = await scrape(reader, "service_cache_purges_total", 'reason="elsewhere"');
    expect((await fetch(page)).status).toBe(200);
    expect(await hits(reader), "the purged page was served from the reader's cache").toBe(before);
    expect(await scrape(reader, "service_cache_purges_total", 'reason="elsewhere"')).toBe(dropped + 1);
    // Kept again by that read.
    await fetch(page);
    expect(await hits(reader)).toBe(before + 1);
  }, 30_000);

  it("an upload through one moves the media total the other reports", async () => {
    const storage = async (server: Server) =>
      ((await (await fetch(`${server.url}/health/storage`)).json()) as { accounted: Record<string, number> }).accounted;
    const { "content-type": _json, ...headers } = await writeHeadersFor(writer.url, API_KEY);
    const form = new FormData();
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#3366cc" } })
      .png()
      .toBuffer();
    form.append("file", new Blob([new Uint8Array(png)], { type: "image/png" }), "a.png");
    const uploaded = await fetch(`${writer.url}/api/v1/media`, { method: "POST", headers, body: form });
    expect(uploaded.status).toBe(201);
    const stored = (await storage(writer)).media;
    expect(stored).toBeGreaterThan(0);
    await waitFor(async () => (await storage(reader)).media === stored, "the reader's media total", 15_000);
  }, 30_000);
});

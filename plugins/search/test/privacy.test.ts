import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startChild } from "./child.js";
import { boot, type Harness } from "./helpers.js";

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** Every form the token could take in a file or log line. */
function forms(token: string): Buffer[] {
  const texts = [token, token.toUpperCase(), token.slice(0, -2), encodeURIComponent(`${token} lighthouse`)];
  return texts.flatMap((t) => [Buffer.from(t, "utf8"), Buffer.from(t, "utf16le")]);
}

async function leaks(dir: string, token: string): Promise<string[]> {
  const found: string[] = [];
  for (const file of await filesUnder(dir)) {
    const bytes = await readFile(file);
    if (forms(token).some((form) => bytes.includes(form))) found.push(file);
  }
  return found;
}

let dataDir: string | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await h?.t.close();
  h = undefined;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

describe("search queries are never logged or stored", () => {
  it("leave no trace in a running server's output or data directory", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vellum-search-privacy-"));
    const token = `qv${randomBytes(6).toString("hex")}xk`;
    const child = startChild("serve", dataDir);
    try {
      const [, base] = await child.waitFor(/listening (http:\/\/127\.0\.0\.1:\d+)/);
      const queries = [
        token,
        token.toUpperCase(),
        `${token} lighthouse`,
        `lighthouse ${token.slice(0, -2)}`,
        `"${token}" NEAR(${token}*) title:${token} AND OR NOT )`,
        `${token}${"x".repeat(240)}`.slice(0, 256),
        token.replace(/.$/, ""),
        "lighthose",
      ];
      const statuses: number[] = [];
      for (const q of queries)
        statuses.push((await fetch(`${base}/api/v1/search?${new URLSearchParams({ q })}`)).status);
      statuses.push((await fetch(`${base}/api/v1/search?${new URLSearchParams({ q: token.repeat(30) })}`)).status);
      for (let i = 0; i < 12; i++) statuses.push((await fetch(`${base}/api/v1/search?q=${token}&limit=abc`)).status);
      expect(statuses).toContain(200);
      expect(statuses).toContain(400);
      expect(statuses).toContain(429);
      expect(await leaks(dataDir, token)).toEqual([]);
    } finally {
      child.process.kill("SIGTERM");
      await child.exited;
    }
    const output = child.output();
    expect(output).toContain("GET /api/v1/search 200");
    expect(output).toContain("GET /api/v1/search 429");
    for (const form of forms(token)) expect(output.includes(form.toString("utf8")), "process output").toBe(false);
    expect(await leaks(dataDir, token)).toEqual([]);
    expect((await filesUnder(dataDir)).some((f) => f.endsWith(".sqlite"))).toBe(true);
  });

  it("leave no trace in metrics or reported errors", async () => {
    h = await boot();
    const token = `qv${randomBytes(6).toString("hex")}xk`;
    await h.search(token);
    await h.search(`${token} ${token}`);
    await h.t.fetch(`/api/v1/search?q=${token}&offset=99999`);
    const metrics = await h.t.vellum.metrics.registry.metrics();
    expect(metrics).toContain("service_search_queries_total");
    expect(metrics).not.toContain(token);
    expect(JSON.stringify(h.t.errors)).not.toContain(token);
  });
});

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, statfs, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mountTmpfs, tmpfsUnavailable, unmountTmpfs } from "../../../plugins/backup/test/tmpfs.js";
import { BIN, type Server, startServer, writeHeadersFor } from "./fuzz-support.js";
import { waitFor } from "./support.js";

// Writes the storage cannot take answer contract §3's 503 with Retry-After, never a 500, and lose
// nothing acknowledged. First the data directory on a real file system that fills up (a tmpfs of
// 8 MiB, nearly filled by a file of the test's own): reads go on, and creates acknowledged before
// are applied once the file is gone, without a restart. Then a database another process locks.

const TMPFS_BYTES = 8 * 1024 * 1024;
/** What the filler leaves free: room for a few creates, not for the test's hundred. */
const LEFT_FREE_BYTES = 600 * 1024;
const API_KEY = "storage-failures-test-key-0123456789";
const CONTENT = `<p>${"lorem ipsum dolor sit amet ".repeat(300)}</p>`;

/** The headers of a write: the key and a CSRF token fetched from the server. */
const writeHeaders = (url: string) => writeHeadersFor(url, API_KEY);

const articleBody = (slug: string) => JSON.stringify({ title: slug, slug, content: CONTENT, tags: ["disk"] });

const unavailable = tmpfsUnavailable();
if (unavailable !== undefined) console.warn(`skipping the full-disk tests: cannot mount a tmpfs (${unavailable})`);

describe.skipIf(unavailable !== undefined)("a full data disk", () => {
  let dir: string;
  let filler: string;
  let server: Server;
  let headers: Record<string, string>;

  beforeAll(async () => {
    dir = mountTmpfs(TMPFS_BYTES);
    filler = join(dir, "filler");
    server = await startServer(dir, { SERVICE_DATA_DIR: join(dir, "data"), SERVICE_API_KEY: API_KEY });
    headers = await writeHeaders(server.url);
    const free = await statfs(dir);
    await writeFile(filler, Buffer.alloc(free.bavail * free.bsize - LEFT_FREE_BYTES));
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    if (dir) unmountTmpfs(dir);
  });

  const create = (slug: string) =>
    fetch(`${server.url}/api/v1/articles`, { method: "POST", headers, body: articleBody(slug) });

  it("answers writes 503 service_unavailable, keeps reads, and applies every acknowledged create once there is room", async () => {
    const acknowledged: string[] = [];
    const refused: Response[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await create(`full-${i}`);
      if (res.status === 202) acknowledged.push(`full-${i}`);
      else refused.push(res);
    }
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const res of refused) {
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("30");
      const { error } = (await res.json()) as { error: Record<string, string> };
      expect(error).toMatchObject({
        code: "service_unavailable",
        message: "The change cannot be stored: the data disk is full.",
      });
      expect(error.request_id).toMatch(/\S/);
    }

    const update = await fetch(`${server.url}/api/v1/articles/${acknowledged[0]}`, {
      method: "PUT",
      headers,
      body: JSON.stringify({ content: CONTENT.repeat(20) }),
    });
    expect(update.status).toBe(503);
    const storage = await fetch(`${server.url}/health/storage`);
    expect(storage.status).toBe(503);
    expect(await storage.json()).toMatchObject({ status: "full" });
    // Degraded, but still ready: reads are served.
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({
      status: "degraded",
      components: { storage: "degraded" },
    });
    const ready = await fetch(`${server.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, checks: { storage: "degraded" } });
    const list = await fetch(`${server.url}/api/v1/articles?limit=1`);
    expect(list.status).toBe(200);

    await rm(filler);
    for (const slug of acknowledged) {
      await waitFor(
        async () => (await fetch(`${server.url}/api/v1/articles/${slug}`)).status === 200,
        `${slug} applied`,
      );
    }
    expect((await create("after-full")).status).toBe(202);
    await waitFor(async () => (await fetch(`${server.url}/api/v1/articles/after-full`)).status === 200, "after-full");
    expect((await fetch(`${server.url}/health/storage`)).status).toBe(200);

    const log = server.output();
    // One line, whichever failed first (a request, or the queue applying acknowledged creates).
    expect(log).toMatch(/ERROR .*the data disk is full \(SQLITE_FULL\): .+ failed\n/);
    expect(log).not.toContain("unhandled error");
    expect(log).not.toContain("cannot rollback");
  }, 60_000);

  it("a first start that cannot store its API key stops with one line and leaves no empty key file behind", async () => {
    const fresh = join(dir, "fresh");
    const keyFile = join(fresh, "settings", "api-key");
    const free = await statfs(dir);
    await writeFile(filler, Buffer.alloc(free.bavail * free.bsize));
    const env = { PATH: process.env.PATH, NO_COLOR: "1", SERVICE_DATA_DIR: fresh };
    const failed = spawnSync(process.execPath, [BIN, "serve", "--port", "0"], { cwd: dir, env, encoding: "utf8" });
    expect(failed.status).toBe(1);
    expect(failed.stderr.trim()).toBe(
      `vellum: cannot store a new API key in ${keyFile}: ENOSPC: no space left on device, write`,
    );
    // Before, an empty file stayed, and every later start refused it as a key "shorter than 24 characters".
    expect(existsSync(keyFile)).toBe(false);
    // With a key given, the CSRF secret is the first file written: its temporary file goes too.
    const keyed = { ...env, SERVICE_API_KEY: API_KEY };
    const noSecret = spawnSync(process.execPath, [BIN, "serve", "--port", "0"], {
      cwd: dir,
      env: keyed,
      encoding: "utf8",
    });
    expect(noSecret.status).toBe(1);
    expect(noSecret.stderr.trim()).toBe("vellum: ENOSPC: no space left on device, write");
    expect(await readdir(join(fresh, "settings"))).toEqual([]);

    await rm(filler);
    const started = await startServer(dir, { SERVICE_DATA_DIR: fresh });
    await started.stop();
    expect(started.output()).toContain(`generated an API key, stored in ${keyFile}`);
  }, 60_000);
});

describe("a database locked by another process", () => {
  let dir: string;
  let server: Server;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "vellum-locked-"));
    server = await startServer(dir, { SERVICE_DATA_DIR: join(dir, "data"), SERVICE_API_KEY: API_KEY });
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers writes 503 service_unavailable with Retry-After 1 while another connection holds the write lock", async () => {
    const headers = await writeHeaders(server.url);
    const create = (slug: string) =>
      fetch(`${server.url}/api/v1/articles`, { method: "POST", headers, body: articleBody(slug) });
    expect((await create("before-lock")).status).toBe(202);
    await waitFor(async () => (await fetch(`${server.url}/api/v1/articles/before-lock`)).status === 200, "applied");

    const other = new Database(join(dir, "data", "db", "vellum.sqlite"));
    other.exec("BEGIN IMMEDIATE");
    try {
      for (const res of [
        await create("while-locked"),
        await fetch(`${server.url}/api/v1/articles/before-lock`, {
          method: "PUT",
          headers,
          body: JSON.stringify({ title: "renamed" }),
        }),
      ]) {
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("1");
        expect(((await res.json()) as { error: unknown }).error).toMatchObject({
          code: "service_unavailable",
          message: "The database is locked by another process; retry shortly.",
        });
      }
      expect((await fetch(`${server.url}/api/v1/articles/before-lock`)).status).toBe(200);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect((await create("after-lock")).status).toBe(202);
    await waitFor(async () => (await fetch(`${server.url}/api/v1/articles/after-lock`)).status === 200, "after-lock");
    expect(server.output()).toMatch(
      /ERROR .*the database is locked by another connection \(SQLITE_BUSY\w*\): .+ failed\n/,
    );
    expect(server.output()).not.toContain("unhandled error");
  }, 60_000);
});

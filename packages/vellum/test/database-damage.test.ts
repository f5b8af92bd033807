import { randomBytes } from "node:crypto";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failingDiskUnavailable, type FailingDisk, mountFailingDisk } from "./failing-disk.js";
import { type Server, startServer, writeHeadersFor } from "./fuzz-support.js";
import { waitFor } from "./support.js";

// A database file damaged while the service runs (a tool that wrote into it), and a data disk that
// fails under it: the requests that meet the damage answer contract §3's 503, never a 500 with a
// stack trace in the log per request, and /health says the database is damaged until an operator
// restores it. Both are real: the first test overwrites most of the file's pages on disk under the
// running server; the second shuts down the ext4 file system its data dir is on.

const API_KEY = "database-damage-test-key-0123456789";
const ARTICLES = 60;
/** Pages left as they were: the header and the first pages of the schema. */
const KEPT_PAGES = 8;
const DAMAGED = "The database cannot be used: its file is damaged or its disk failed.";

/** The headers of a write: the key and a CSRF token fetched from the server. */
const writeHeaders = (url: string) => writeHeadersFor(url, API_KEY);

/** Creates `count` articles `<prefix>-<i>` of about 4 KB each and waits until the last is applied. */
async function createArticles(url: string, headers: Record<string, string>, prefix: string, count: number) {
  for (let i = 0; i < count; i++) {
    const content = `<p>${randomBytes(2_000).toString("hex")}</p>`;
    const body = JSON.stringify({ title: `${prefix} ${i}`, slug: `${prefix}-${i}`, content, tags: ["disk"] });
    expect((await fetch(`${url}/api/v1/articles`, { method: "POST", headers, body })).status).toBe(202);
  }
  const last = `${url}/api/v1/articles/${prefix}-${count - 1}`;
  await waitFor(async () => (await fetch(last)).status === 200, "every create applied");
}

describe("a database file damaged while the service runs", () => {
  let dir: string;
  let server: Server;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "vellum-damage-"));
    server = await startServer(dir, { SERVICE_DATA_DIR: join(dir, "data"), SERVICE_API_KEY: API_KEY });
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers 503 service_unavailable instead of 500, logs one line and reports the database damaged", async () => {
    const headers = await writeHeaders(server.url);
    await createArticles(server.url, headers, "damage", ARTICLES);
    expect((await fetch(`${server.url}/health/db`)).status).toBe(200);

    const file = join(dir, "data", "db", "vellum.sqlite");
    const other = new Database(file);
    other.pragma("wal_checkpoint(TRUNCATE)");
    const pageSize = other.pragma("page_size", { simple: true }) as number;
    const pages = other.pragma("page_count", { simple: true }) as number;
    other.close();
    const handle = await open(file, "r+");
    await handle.write(Buffer.alloc((pages - KEPT_PAGES) * pageSize, 0xab), 0, undefined, KEPT_PAGES * pageSize);
    await handle.close();

    const answers = [
      await fetch(`${server.url}/api/v1/articles?limit=50`),
      await fetch(`${server.url}/api/v1/articles/damage-3`),
      await fetch(`${server.url}/api/v1/articles/damage-7`, {
        method: "PUT",
        headers,
        body: JSON.stringify({ title: "renamed" }),
      }),
      await fetch(`${server.url}/api/v1/articles/damage-9`, { method: "DELETE", headers }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("300");
      const { error } = (await res.json()) as { error: Record<string, string> };
      expect(error).toMatchObject({ code: "service_unavailable", message: DAMAGED });
      expect(error.request_id).toMatch(/\S/);
    }

    const db = await fetch(`${server.url}/health/db`);
    expect(db.status).toBe(503);
    expect(await db.json()).toMatchObject({ status: "unavailable", latency_ms: null, reason: "damaged" });
    const ready = await fetch(`${server.url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, checks: { db: "unavailable" } });

    const log = server.output();
    expect(log).toMatch(
      /ERROR .*the database file is damaged or its disk failed \(SQLITE_(CORRUPT|NOTADB)\w*\): .+ failed; check the disk, then restore/,
    );
    expect(log).toContain("database check is failing: the database file is damaged or its disk failed (SQLITE_");
    expect(log).not.toContain("unhandled error");
    // No stack trace per request: the only one is the search component's, once, when its check started failing.
    expect(log.match(/SqliteError/g)?.length ?? 0).toBeLessThanOrEqual(1);
  }, 60_000);
});

const diskUnavailable = failingDiskUnavailable();
if (diskUnavailable !== undefined) console.warn(`skipping the failing-disk test: cannot make one (${diskUnavailable})`);

describe.skipIf(diskUnavailable !== undefined)("a data disk that fails while the service runs", () => {
  let disk: FailingDisk;
  let server: Server;

  beforeAll(async () => {
    disk = mountFailingDisk(64 * 1024 * 1024);
    server = await startServer(disk.dir, { SERVICE_DATA_DIR: join(disk.dir, "data"), SERVICE_API_KEY: API_KEY });
  }, 30_000);

  afterAll(async () => {
    await server?.stop();
    disk?.remove();
  });

  it("answers 503 service_unavailable to what needs the disk, never 500, and logs one line per kind", async () => {
    const headers = await writeHeaders(server.url);
    await createArticles(server.url, headers, "disk", 5);
    disk.fail();

    const create = await fetch(`${server.url}/api/v1/articles`, {
      method: "POST",
      headers,
      body: JSON.stringify({ title: "After", slug: "after", content: "<p>after</p>" }),
    });
    expect(create.status).toBe(503);
    expect(create.headers.get("retry-after")).toBe("30");
    expect(((await create.json()) as { error: unknown }).error).toMatchObject({
      code: "service_unavailable",
      message: "The data disk cannot be read or written.",
    });
    const others = [
      await fetch(`${server.url}/api/v1/articles/disk-1`, { method: "PUT", headers, body: '{"title":"renamed"}' }),
      await fetch(`${server.url}/api/v1/articles/disk-2`, { method: "DELETE", headers }),
      await fetch(`${server.url}/api/v1/articles?limit=50`),
      await fetch(`${server.url}/api/v1/articles/disk-3`),
      await fetch(`${server.url}/api/v1/search?q=disk`),
    ];
    for (const res of others) {
      // What SQLite still holds in memory may be served; nothing else may be answered but a 503.
      if (res.status === 200) continue;
      expect(res.status).toBe(503);
      const { error } = (await res.json()) as { error: { message: string } };
      expect(["The data disk cannot be read or written.", DAMAGED]).toContain(error.message);
    }

    const log = server.output();
    expect(log).toMatch(
      /ERROR .*the data disk cannot be read or written \(SQLITE_IOERR\w*\): POST \/api\/v1\/articles/,
    );
    expect(log).not.toContain("unhandled error");
  }, 60_000);
});

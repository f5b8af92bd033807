import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, type Server, startServer, writeHeadersFor } from "./fuzz-support.js";
import { startReceiver, type TestReceiver } from "./webhook-receiver.js";
import { ARTICLES, waitFor } from "./support.js";

// Two `vellum serve` processes on one data directory, as a process manager's cluster mode or an
// overlapping deploy runs them (docs/operations.md, "Several processes on one database"). Before
// leases and `BEGIN IMMEDIATE`, creates answered 503 (SQLITE_BUSY) and webhook events went out twice,
// once from each process's worker; each process's response cache served pages the other had changed.

const API_KEY = "shared-database-api-key-0123456789";
const SECRET = "shared-database-secret-0123456789";

let dir: string;
let receiver: TestReceiver;
const servers: Server[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "vellum-shared-"));
  receiver = await startReceiver();
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await receiver?.close();
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({
  SERVICE_DATA_DIR: join(dir, "data"),
  SERVICE_API_KEY: API_KEY,
  SERVICE_WEBHOOK_URLS: receiver.url,
  SERVICE_WEBHOOK_SECRET: SECRET,
});

/** Event ids the receiver got, with how many times each. */
function eventCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { body } of receiver.received) {
    const { id } = JSON.parse(body) as { id: string };
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

interface Accepted {
  status: number;
  job?: string;
}

/** `count` creates, `concurrency` at a time, spread over `urls` in turn; the answers in order. */
async function createMany(urls: string[], from: number, count: number, concurrency = 6): Promise<Accepted[]> {
  const headers = await Promise.all(urls.map((url) => writeHeadersFor(url, API_KEY)));
  const answers: Accepted[] = [];
  let next = from;
  const worker = async () => {
    while (next < from + count) {
      const n = next++;
      const server = n % urls.length;
      const response = await fetch(`${urls[server]}${ARTICLES}`, {
        method: "POST",
        headers: headers[server],
        body: JSON.stringify({ title: `Shared ${n}`, slug: `shared-${n}`, content: `<p>${n}</p>` }),
      });
      const body = (await response.json()) as { job?: { id: string }; error?: { message: string } };
      answers[n - from] = { status: response.status, ...(body.job && { job: body.job.id }) };
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return answers;
}

/** The process ids holding the leases of queues, read from the lease file as an operator would. */
function queueLeaseHolders(): Set<number> {
  const db = new Database(join(dir, "data", "db", "vellum.sqlite.leases"), { readonly: true });
  try {
    const rows = db.prepare("SELECT holder FROM leases WHERE name LIKE 'queue:%'").all() as Array<{
      holder: string;
    }>;
    return new Set(rows.map((row) => Number(row.holder.split("/").at(-2))));
  } finally {
    db.close();
  }
}

/** The later tests go on with the first one's two processes; say so plainly when it could not start them. */
function startedPair(): void {
  expect(servers, "the first test did not start its two processes").toHaveLength(2);
}

async function articleCount(url: string): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const response = await fetch(`${url}${ARTICLES}?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    const page = (await response.json()) as { articles: unknown[]; next_cursor?: string | null };
    count += page.articles.length;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return count;
}

describe("two vellum serve processes on one data directory", () => {
  it("start together, accept every create, apply it once and send each event once", async () => {
    // Started at the same moment on a new data directory: both migrate it, neither fails. One may
    // wait for the other's migrations (up to a minute), so each gets that long to listen.
    const start = () => startServer(dir, env(), 60_000);
    servers.push(...(await Promise.all([start(), start()])));
    const urls = servers.map((server) => server.url);
    const answers = await createMany(urls, 0, 120);
    expect(answers.map((answer) => answer.status)).toEqual(Array(120).fill(202));
    await waitFor(() => receiver.received.length >= 120, "120 deliveries", 30_000);
    expect(await articleCount(urls[1] as string)).toBe(120);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // time for a second delivery, were there one
    const counts = eventCounts();
    expect(counts.size).toBe(120);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // Each process says whether it works the articles queue: exactly one does.
    const workedHere = await Promise.all(
      urls.map(async (url) => {
        const body = (await (await fetch(`${url}/health/workers`)).json()) as {
          workers: Array<{ queue: string; worked_here: boolean }>;
        };
        return body.workers.find((worker) => worker.queue === "articles")?.worked_here;
      }),
    );
    expect(workedHere.sort()).toEqual([false, true]);
  }, 90_000);

  it("never serve a page the other process changed from their own response cache", async () => {
    startedPair();
    const urls = servers.map((server) => server.url);
    const read = async <T>(url: string, path: string) => (await (await fetch(`${url}${path}`)).json()) as T;
    type List = { articles: Array<{ slug: string; title: string }> };
    const newest = (await read<List>(urls[0] as string, `${ARTICLES}?limit=5`)).articles[0]?.slug as string;
    for (const [n, [writer, reader]] of [urls, [...urls].reverse()].entries()) {
      // Both processes hold the article and the first list page (a second read is a hit).
      for (const url of urls)
        for (let i = 0; i < 2; i++) {
          await read(url, `${ARTICLES}/${newest}`);
          await read(url, `${ARTICLES}?limit=5`);
        }
      const update = await fetch(`${writer}${ARTICLES}/${newest}`, {
        method: "PUT",
        headers: await writeHeadersFor(writer as string, API_KEY),
        body: JSON.stringify({ title: `Changed ${n}` }),
      });
      expect(update.status).toBe(200);
      expect((await read<{ title: string }>(reader as string, `${ARTICLES}/${newest}`)).title).toBe(`Changed ${n}`);
      const list = await read<List>(reader as string, `${ARTICLES}?limit=5`);
      expect(list.articles[0]).toMatchObject({ slug: newest, title: `Changed ${n}` });
    }
  });

  it("go on when the process working the queues is killed: the other takes them over", async () => {
    startedPair();
    // One process holds every queue's lease (its first renewal took them all in one transaction).
    const holders = [...queueLeaseHolders()];
    expect(holders).toHaveLength(1);
    const first = servers.find((server) => server.child.pid === holders[0]) as Server;
    const second = servers.find((server) => server !== first) as Server;
    first.child.kill("SIGKILL");
    await first.stop();
    const answers = await createMany([second.url], 120, 30, 3);
    expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(202));
    await waitFor(() => eventCounts().size >= 150, "150 distinct events", 30_000);
    expect(await articleCount(second.url)).toBe(150);
    expect(second.output()).not.toMatch(/ERROR/);
    expect([...queueLeaseHolders()]).toEqual([second.child.pid]);
  }, 90_000);

  it("keep a restore out until the last of them stops, not only the one that started last", async () => {
    startedPair();
    const remaining = servers.find((server) => server.child.exitCode === null && server.child.signalCode === null);
    // A third process starts (its pid goes into .vellum.lock) and stops again (taking that file with it).
    const third = await startServer(dir, env());
    await third.stop();
    const restore = await new Promise<{ status: number; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [BIN, "restore", "-in", join(dir, "none.vpbk"), "-dest", join(dir, "data")],
        { env: { ...process.env, ...env(), SERVICE_BACKUP_PASSPHRASE: "Correct horse battery staple 42" } },
        (error, _stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stderr }),
      ),
    );
    expect(restore.status, restore.stderr).toBe(5);
    expect(restore.stderr).toContain(`a running Vellum (pid ${remaining?.child.pid}) holds the data dir`);
  }, 60_000);
});

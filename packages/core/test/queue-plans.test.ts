import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { MigrationRunner } from "../src/db/migrations.js";
import { openSqlite } from "../src/db/sqlite.js";
import type { VellumDatabase } from "../src/db/types.js";
import { queueMigrations } from "../src/queue/migrations.js";
import { createJobQueue } from "./helpers/job-queue.js";
import { sleep, waitFor } from "./helpers/wait.js";

let dir: string | undefined;
let database: VellumDatabase | undefined;
afterEach(async () => {
  await database?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  database = dir = undefined;
});

/** SQLite's plan for `statement`, one line per step. */
function plan(path: string, statement: string): string {
  const raw = new Database(path, { readonly: true });
  try {
    const parameters = Array.from({ length: statement.split("?").length - 1 }, () => "x");
    const rows = raw.prepare(`EXPLAIN QUERY PLAN ${statement}`).all(...parameters) as Array<{ detail: string }>;
    return rows.map((row) => row.detail).join("\n");
  } finally {
    raw.close();
  }
}

/** A job queue on a fresh, migrated database that records every statement it runs. */
async function recordedQueue() {
  dir = await mkdtemp(join(tmpdir(), "vellum-queue-plans-"));
  const path = join(dir, "queue.db");
  const statements: string[] = [];
  database = await openSqlite({ path }, ({ sql }) => statements.push(sql));
  const runner = new MigrationRunner(database.kysely);
  runner.register("core", queueMigrations);
  expect((await runner.migrate(["core"])).error).toBeUndefined();
  return { path, statements, db: database.kysely, ...createJobQueue(database) };
}

/** The delivery queue `hooks` of a receiver that is down: every attempt fails, and a retry waits a minute. */
function receiverDown(
  process: ReturnType<typeof createJobQueue>["process"],
  options: { concurrency?: number; pollMs?: number },
): { attempts: number } {
  const state = { attempts: 0 };
  process(
    "hooks",
    async () => {
      state.attempts += 1;
      throw new Error("down");
    },
    { mode: "at-least-once", backoffMs: () => 60_000, ...options },
  );
  return state;
}

describe("the queue's statements and SQLite's plans", () => {
  it("marks a batch applied by seeking its ids, not by walking the jobs other queues have waiting", async () => {
    const { path, statements, db, queue, process } = await recordedQueue();
    // A backlog on another queue, as held webhook deliveries make one.
    for (let n = 0; n < 300; n += 1) await queue.enqueue(db, "backlog", "deliver", { n }, `r${n % 3}`);
    process("writes", async () => undefined);
    for (let n = 0; n < 40; n += 1) await queue.enqueue(db, "writes", "create", { n }, `slug-${n}`);
    queue.start();
    await waitFor(async () => (await queue.depth("writes")) === 0);
    await queue.stop();
    const mark = statements.find((sql) => /^UPDATE _vellum_jobs SET status = 'applied'/.test(sql));
    expect(mark).toBeDefined();
    // With the ids as a list and the status alone, SQLite chose the (status, queue) index and walked every queued job.
    const detail = plan(path, mark as string);
    expect(detail).not.toContain("_vellum_jobs_status_queue");
    expect(detail).toMatch(/USING (COVERING )?INDEX _vellum_jobs_queue_status_id \(queue=\? AND status=\? AND id=\?\)/);
  });

  it("looks for due deliveries at most every 10 ms while nothing can start, however often jobs arrive", async () => {
    const { statements, db, queue, process } = await recordedQueue();
    const down = receiverDown(process, { concurrency: 4 });
    queue.start();
    await queue.enqueue(db, "hooks", "deliver", { n: 0 }, "down");
    await waitFor(() => down.attempts === 1);
    await sleep(20);
    const looks = () => statements.filter((sql) => sql.includes("WITH RECURSIVE keys")).length;
    const before = looks();
    // 100 events for the receiver that is down, one per turn of the event loop, as creates commit.
    const started = Date.now();
    for (let n = 1; n <= 100; n += 1) {
      await queue.enqueue(db, "hooks", "deliver", { n }, "down");
      await new Promise((resolve) => setImmediate(resolve));
    }
    await sleep(30);
    const elapsed = Date.now() - started;
    const taken = looks() - before;
    await queue.stop();
    // A look per new job would be 100; one per 10 ms at most, and one more at the end of the burst.
    expect(taken).toBeLessThanOrEqual(Math.ceil(elapsed / 10) + 2);
    expect(taken).toBeLessThan(100);
    expect(down.attempts).toBe(1);
  });

  it("finds the next retry through the jobs waiting for one, not the queue's whole backlog", async () => {
    const { path, statements, db, queue, process } = await recordedQueue();
    // A receiver that is down: its first event waits for a retry, the 200 after it for that one.
    const down = receiverDown(process, { pollMs: 20 });
    for (let n = 0; n < 200; n += 1) await queue.enqueue(db, "hooks", "deliver", { n }, "down");
    queue.start();
    await waitFor(() => down.attempts === 1 && statements.some((sql) => /MIN\(run_at\)/.test(sql)));
    await queue.stop();
    const lookup = statements.find((sql) => /MIN\(run_at\)/.test(sql)) as string;
    expect(plan(path, lookup)).toMatch(/USING INDEX _vellum_jobs_retrying \(queue=\?\)/);
  });
});

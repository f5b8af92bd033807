import { encodeTime } from "ulidx";
import { describe, expect, it } from "vitest";
import { PRUNE_CHUNK } from "../src/queue/prune.js";
import { eventLoopTurns } from "../src/testing/index.js";
import type { AnyDb } from "./helpers/job-queue.js";
import { queueTestbed } from "./helpers/queue-testbed.js";

const { setup } = queueTestbed();
const DAY = 86_400_000;

let serial = 0;
/** Inserts `count` jobs of `queue` made and last updated `ageMs` ago, with ids of that time (as the queue makes them). */
async function insertJobs(db: AnyDb, queue: string, status: string, count: number, ageMs: number): Promise<void> {
  const at = Date.now() - ageMs;
  const iso = new Date(at).toISOString();
  const rows = Array.from({ length: count }, () => ({
    id: `${encodeTime(at, 10)}${String(++serial).padStart(16, "0")}`,
    queue,
    key: null,
    type: "write",
    payload: "null",
    status,
    attempts: status === "failed" ? 1 : 0,
    run_at: at,
    created_at: iso,
    updated_at: iso,
  }));
  for (let start = 0; start < rows.length; start += 500)
    await db
      .insertInto("_vellum_jobs")
      .values(rows.slice(start, start + 500))
      .execute();
}

async function countJobs(db: AnyDb, queue: string, status: string): Promise<number> {
  const row = await db
    .selectFrom("_vellum_jobs")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("queue", "=", queue)
    .where("status", "=", status)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe("pruning applied jobs", () => {
  it("deletes a large backlog in chunks, with the event loop free between them", async () => {
    const { db, queue } = await setup();
    const old = 2 * PRUNE_CHUNK + 500;
    await insertJobs(db, "writes", "applied", old, 2 * DAY);
    const { value: deleted, turns } = await eventLoopTurns(() => queue.prune(DAY));
    expect(deleted).toBe(old);
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(await countJobs(db, "writes", "applied")).toBe(0);
  });

  it("keeps what is not due: recent applied jobs, queued and dead ones, and a queue's longer retention", async () => {
    const { db, queue, process } = await setup();
    process("kept", async () => undefined, { mode: "at-least-once", retainAppliedMs: 7 * DAY });
    await insertJobs(db, "writes", "applied", 3, 2 * DAY);
    await insertJobs(db, "writes", "applied", 4, DAY / 2);
    await insertJobs(db, "writes", "queued", 2, 2 * DAY);
    await insertJobs(db, "writes", "failed", 2, 2 * DAY);
    await insertJobs(db, "kept", "applied", 5, 2 * DAY);
    await insertJobs(db, "kept", "applied", 1, 8 * DAY);
    // A queue no plugin processes any more (its plugin was removed): its applied jobs go after the default.
    await insertJobs(db, "gone", "applied", 6, 2 * DAY);
    expect(await queue.prune(DAY)).toBe(3 + 1 + 6);
    expect(await countJobs(db, "writes", "applied")).toBe(4);
    expect(await countJobs(db, "writes", "queued")).toBe(2);
    expect(await countJobs(db, "writes", "failed")).toBe(2);
    expect(await countJobs(db, "kept", "applied")).toBe(5);
    expect(await countJobs(db, "gone", "applied")).toBe(0);
  });

  it("keeps a job made before the cutoff but applied after it (a long retry)", async () => {
    const { db, queue } = await setup();
    await insertJobs(db, "writes", "applied", 1, 2 * DAY);
    await db.updateTable("_vellum_jobs").set({ updated_at: new Date().toISOString() }).execute();
    expect(await queue.prune(DAY)).toBe(0);
    expect(await countJobs(db, "writes", "applied")).toBe(1);
  });
});

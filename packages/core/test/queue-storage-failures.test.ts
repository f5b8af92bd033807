import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { TransactionLostError } from "../src/db/write.js";
import { effectValues, insertEffect, queueTestbed } from "./helpers/queue-testbed.js";
import { waitFor } from "./helpers/wait.js";

const { setup } = queueTestbed();

/** What better-sqlite3 throws when a write finds the disk full, or another connection holding the lock. */
const diskFull = () => Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
const locked = () => Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });

// After SQLITE_FULL (or SQLITE_IOERR, SQLITE_NOMEM) SQLite may roll the whole transaction back on
// its own. The handler below does what SQLite does then, with a real ROLLBACK, before it throws:
// the batch must end there, not go on statement by statement outside any transaction.
describe("a transaction SQLite rolled back itself", () => {
  it("ends the batch: no job is charged an attempt, no effect or applied mark commits alone, and the next look applies all", async () => {
    const { db, queue, errors, process } = await setup();
    const first = await queue.enqueue(db, "docs", "first", { n: 1 }, "A");
    const full = await queue.enqueue(db, "docs", "full", { n: 2 }, "B");
    const last = await queue.enqueue(db, "docs", "last", { n: 3 }, "C");
    let lose = true;
    process(
      "docs",
      async (job, w) => {
        await insertEffect(w.trx, job);
        if (job.type === "full" && lose) {
          lose = false;
          await sql`ROLLBACK`.execute(w.trx);
          throw diskFull();
        }
      },
      { backoffMs: () => 60_000, pollMs: 20 },
    );
    queue.start();
    await waitFor(async () => (await queue.get(last.id))?.status === "applied");

    for (const job of [first, full, last]) {
      expect(await queue.get(job.id)).toMatchObject({ status: "applied", attempts: 0 });
    }
    // Each effect once: the first look's were rolled back with its transaction, none committed alone.
    expect(await effectValues(db)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(errors).toHaveLength(1);
    const error = errors[0]?.error;
    expect(error).toBeInstanceOf(TransactionLostError);
    expect((error as Error).cause).toMatchObject({ code: "SQLITE_FULL" });
  });
});

describe("a job that meets a full disk or a held lock", () => {
  it("is not charged an attempt: the batch ends and the next look applies it", async () => {
    const { db, queue, errors, process } = await setup();
    const other = await queue.enqueue(db, "docs", "other", { n: 1 }, "A");
    const busy = await queue.enqueue(db, "docs", "busy", { n: 2 }, "B");
    let failures = 0;
    process(
      "docs",
      async (job, w) => {
        if (job.type === "busy" && failures < 3) {
          failures++;
          throw locked();
        }
        await insertEffect(w.trx, job);
      },
      { backoffMs: () => 60_000, pollMs: 20, maxAttempts: 2 },
    );
    queue.start();
    await waitFor(async () => (await queue.get(busy.id))?.status === "applied");

    // Three failures with two attempts allowed: it would have been dead-lettered had they counted.
    expect(failures).toBe(3);
    for (const job of [other, busy]) {
      expect(await queue.get(job.id)).toMatchObject({ status: "applied", attempts: 0 });
    }
    expect(await effectValues(db)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(errors.map(({ error }) => (error as { code?: string }).code)).toEqual([
      "SQLITE_BUSY",
      "SQLITE_BUSY",
      "SQLITE_BUSY",
    ]);
  });
});

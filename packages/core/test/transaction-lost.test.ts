import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { TransactionLostError } from "../src/db/write.js";
import { effectValues, insertEffect, queueTestbed } from "./helpers/queue-testbed.js";
import { waitFor } from "./helpers/wait.js";

const { setup } = queueTestbed();

/** What better-sqlite3 throws when a write finds the disk full. */
const diskFull = () => Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });

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

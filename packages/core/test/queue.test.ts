import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { VellumDatabase } from "../src/db/types.js";
import { collectForCommit } from "../src/db/write.js";
import { VellumError } from "../src/errors/vellum-error.js";
import type { JobRecord } from "../src/queue/types.js";
import { defaultBackoffMs } from "../src/queue/worker.js";
import type { AnyDb } from "./helpers/job-queue.js";
import { type AnyTransaction, effectValues, insertEffect, queueTestbed } from "./helpers/queue-testbed.js";
import { deferred, sleep, waitFor } from "./helpers/wait.js";

const { setup, tempPath, open, newQueue } = queueTestbed();

/** The plugin that owns the test queues (the owner of their writes). */
const OWNER = "test";

describe("JobQueue", () => {
  it("applies the jobs of a queue in enqueue order, including jobs enqueued while it runs", async () => {
    const { db, queue, errors } = await setup();
    const seen: number[] = [];
    for (let n = 0; n < 30; n++) await queue.enqueue(db, "writes", "write", { n });
    queue.process(OWNER, "writes", async (job) => {
      seen.push((job.payload as { n: number }).n);
    });
    queue.start();
    for (let n = 30; n < 60; n++) await queue.enqueue(db, "writes", "write", { n });
    await waitFor(() => seen.length === 60);
    expect(seen).toEqual(Array.from({ length: 60 }, (_, n) => n));
    expect(await queue.stats()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("gives jobs monotonic ULIDs and returns the stored record from get()", async () => {
    const { db, queue } = await setup();
    const jobs: JobRecord[] = [];
    for (let n = 0; n < 50; n++) jobs.push(await queue.enqueue(db, "q", "t", { n }));
    const ids = jobs.map((job) => job.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(50);
    const stored = await queue.get(ids[3] as string);
    expect(stored).toMatchObject({ id: ids[3], queue: "q", type: "t", payload: { n: 3 }, status: "queued" });
    expect(stored?.attempts).toBe(0);
    expect(stored?.last_error).toBeNull();
    expect(await queue.get("01ARZ3NDEKTSV4RRFFQ69G5FAV")).toBeUndefined();
  });

  it("group-commits pending jobs: many jobs share one transaction", async () => {
    const { db, queue } = await setup();
    for (let n = 0; n < 100; n++) await queue.enqueue(db, "writes", "write", { n });
    const transactions = new Map<AnyTransaction, string[]>();
    queue.process(
      OWNER,
      "writes",
      async (job, trx) => {
        transactions.set(trx, [...(transactions.get(trx) ?? []), job.id]);
        await insertEffect(trx, job);
      },
      { batchSize: 32 },
    );
    queue.start();
    await waitFor(async () => (await queue.stats()).length === 0);
    expect([...transactions.values()].map((ids) => ids.length)).toEqual([32, 32, 32, 4]);
    const statuses = await db.selectFrom("_vellum_jobs").select("status").distinct().execute();
    expect(statuses).toEqual([{ status: "applied" }]);
    expect(await effectValues(db)).toEqual(Array.from({ length: 100 }, (_, n) => ({ n })));
  });

  it("applies a batch with commits that do not wait for the disk, and every other query waits for full sync", async () => {
    const { db, queue } = await setup();
    const mode = async (executor: AnyDb) =>
      Number((await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(executor)).rows[0]?.synchronous);
    const release = deferred();
    const seen: number[] = [];
    queue.process(OWNER, "writes", async (job, trx) => {
      seen.push(await mode(trx));
      await insertEffect(trx, job);
      await release.promise;
    });
    queue.start();
    await queue.enqueue(db, "writes", "write", { n: 1 });
    await waitFor(() => seen.length === 1);
    // The batch holds the connection: this query runs only after it, when FULL (2) is back.
    const outside = mode(db);
    await sleep(20);
    release.resolve();
    expect(await outside).toBe(2);
    expect(seen).toEqual([1]);
    await waitFor(async () => (await queue.stats()).length === 0);
    expect(await effectValues(db)).toEqual([{ n: 1 }]);
  });

  it("collectForCommit: one flush per batch with every applied job's items, none of a failed job's", async () => {
    const { db, queue } = await setup();
    await db.schema.createTable("totals").addColumn("sum", "integer").addColumn("items", "integer").execute();
    for (let n = 1; n <= 20; n++) await queue.enqueue(db, "writes", "write", { n });
    const flushes: number[][] = [];
    const addToTotals = async (trx: AnyDb, items: number[]) => {
      flushes.push(items);
      const sum = items.reduce((a, b) => a + b, 0);
      await trx.insertInto("totals").values({ sum, items: items.length }).execute();
    };
    let failedOnce = false;
    queue.process(
      OWNER,
      "writes",
      async (job, trx) => {
        const n = (job.payload as { n: number }).n;
        await insertEffect(trx, job);
        await collectForCommit(trx, "totals", n, addToTotals);
        if (n === 15 && !failedOnce) {
          failedOnce = true;
          throw new Error("job 15 fails once, after collecting");
        }
      },
      { batchSize: 20, backoffMs: () => 0 },
    );
    queue.start();
    await waitFor(async () => (await queue.stats()).length === 0);
    // The first batch stops at job 15: 1..14 flushed together; 15 (retried) .. 20 in the next.
    expect(flushes).toEqual([Array.from({ length: 14 }, (_, i) => i + 1), [15, 16, 17, 18, 19, 20]]);
    const totals = await db.selectFrom("totals").selectAll().execute();
    expect(totals).toEqual([
      { sum: 105, items: 14 },
      { sum: 105, items: 6 },
    ]);
    // Outside a batch the kernel runs, the flush happens at once with the one item.
    await db.transaction().execute((trx) => collectForCommit(trx, "totals", 7, addToTotals));
    expect(flushes.at(-1)).toEqual([7]);
  });

  it("yields to the event loop between batches so a busy queue never starves timers and I/O", async () => {
    const { db, queue } = await setup();
    await db.transaction().execute(async (trx) => {
      for (let n = 0; n < 300; n++) await queue.enqueue(trx, "writes", "write", { n });
    });
    let handled = 0;
    queue.process(
      OWNER,
      "writes",
      async (job, trx) => {
        await insertEffect(trx, job);
        handled++;
      },
      { batchSize: 1 },
    );
    queue.start();
    const handledWhenTimerFired = await new Promise<number>((resolve) => setTimeout(() => resolve(handled), 0));
    expect(handledWhenTimerFired).toBeLessThan(300);
    await waitFor(() => handled === 300);
  });

  it("rolls a failing job back to its savepoint, commits the jobs before it and retries it first", async () => {
    const { db, queue } = await setup();
    for (let n = 0; n < 10; n++) await queue.enqueue(db, "writes", "write", { n });
    let failedOnce = false;
    const batches = new Map<AnyTransaction, number[]>();
    queue.process(
      OWNER,
      "writes",
      async (job, trx) => {
        const n = (job.payload as { n: number }).n;
        batches.set(trx, [...(batches.get(trx) ?? []), n]);
        await insertEffect(trx, job);
        if (n === 4 && !failedOnce) {
          failedOnce = true;
          throw new Error("transient");
        }
      },
      { backoffMs: () => 30 },
    );
    queue.start();
    await waitFor(async () => (await queue.stats()).length === 0);
    expect([...batches.values()]).toEqual([
      [0, 1, 2, 3, 4],
      [4, 5, 6, 7, 8, 9],
    ]);
    expect(await effectValues(db)).toEqual(Array.from({ length: 10 }, (_, n) => ({ n })));
    const jobs = await db.selectFrom("_vellum_jobs").select(["attempts", "last_error"]).orderBy("id").execute();
    expect(jobs[4]).toEqual({ attempts: 1, last_error: "transient" });
  });

  it("retries with backoff, dead-letters after maxAttempts, blocks only its own queue, and replays", async () => {
    const { db, queue, errors } = await setup();
    let healthy = false;
    const attemptsAt: number[] = [];
    const applied: string[] = [];
    queue.process(
      OWNER,
      "a",
      async (job) => {
        if (job.type === "poison" && !healthy) {
          attemptsAt.push(Date.now());
          throw new Error(`boom ${attemptsAt.length}`);
        }
        applied.push(`a:${job.type}`);
      },
      { maxAttempts: 3, backoffMs: (attempt) => attempt * 250 },
    );
    queue.process(OWNER, "b", async (job) => {
      applied.push(`b:${(job.payload as { n: number }).n}`);
    });
    queue.start();
    const poison = await queue.enqueue(db, "a", "poison", {});
    await queue.enqueue(db, "a", "after", {});
    await waitFor(() => attemptsAt.length === 1);
    for (let n = 0; n < 3; n++) await queue.enqueue(db, "b", "write", { n });
    await waitFor(() => applied.length === 3);
    expect(applied).toEqual(["b:0", "b:1", "b:2"]);
    expect(await queue.get(poison.id)).toMatchObject({ status: "queued", attempts: 1, last_error: "boom 1" });
    expect(await queue.stats()).toEqual([{ queue: "a", queued: 2, failed: 0 }]);

    await waitFor(() => applied.includes("a:after"));
    expect(attemptsAt).toHaveLength(3);
    expect((attemptsAt[1] as number) - (attemptsAt[0] as number)).toBeGreaterThanOrEqual(250);
    expect((attemptsAt[2] as number) - (attemptsAt[1] as number)).toBeGreaterThanOrEqual(500);
    expect(await queue.get(poison.id)).toMatchObject({ status: "failed", attempts: 3, last_error: "boom 3" });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ queue: "a", jobId: poison.id });
    expect(await queue.stats()).toEqual([{ queue: "a", queued: 0, failed: 1 }]);

    healthy = true;
    expect(await queue.replay("b")).toBe(0);
    expect(await queue.replay("a", [])).toBe(0);
    expect(await queue.replay("a", [poison.id])).toBe(1);
    await waitFor(() => applied.includes("a:poison"));
    expect(await queue.get(poison.id)).toMatchObject({ status: "applied", attempts: 0, last_error: null });
    expect(await queue.replay()).toBe(0);
  });

  it("leaves no job behind when the enqueuing transaction rolls back", async () => {
    const { db, queue } = await setup();
    const handled: string[] = [];
    queue.process(OWNER, "writes", async (job, trx) => {
      handled.push(job.id);
      await insertEffect(trx, job);
    });
    queue.start();
    let rolledBack: JobRecord | undefined;
    await expect(
      db.transaction().execute(async (trx) => {
        rolledBack = await queue.enqueue(trx, "writes", "write", { n: 1 });
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    const committed = await db.transaction().execute((trx) => queue.enqueue(trx, "writes", "write", { n: 2 }));
    await waitFor(() => handled.length === 1);
    await sleep(50);
    expect(handled).toEqual([committed.id]);
    expect(await queue.get(rolledBack?.id as string)).toBeUndefined();
    expect(await effectValues(db)).toEqual([{ n: 2 }]);
  });

  it("runs at-least-once handlers outside any transaction and never lets a slow queue delay another", async () => {
    const { db, queue } = await setup();
    const release = deferred();
    const deliveries: Array<{ args: number; statusDuringDelivery: unknown }> = [];
    let calls = 0;
    queue.process(
      OWNER,
      "hooks",
      async (...args: unknown[]) => {
        const job = args[0] as JobRecord;
        calls++;
        // The outer connection is free (no transaction holds it) and the job is not yet marked applied.
        const row = await db.selectFrom("_vellum_jobs").select("status").where("id", "=", job.id).executeTakeFirst();
        deliveries.push({ args: args.length, statusDuringDelivery: row?.status });
        if (calls === 1) throw new Error("receiver down");
        await release.promise;
      },
      { mode: "at-least-once", backoffMs: () => 10 },
    );
    queue.process(OWNER, "writes", async (job, trx) => insertEffect(trx, job));
    queue.start();
    const hook = await queue.enqueue(db, "hooks", "deliver", {});
    await waitFor(() => deliveries.length === 2);
    for (let n = 0; n < 5; n++) await queue.enqueue(db, "writes", "write", { n });
    await waitFor(async () => (await effectValues(db)).length === 5);
    expect(await queue.get(hook.id)).toMatchObject({ status: "queued", attempts: 1, last_error: "receiver down" });
    release.resolve();
    await waitFor(async () => (await queue.get(hook.id))?.status === "applied");
    expect(deliveries).toEqual([
      { args: 1, statusDuringDelivery: "queued" },
      { args: 1, statusDuringDelivery: "queued" },
    ]);
  });

  it("runs after-commit callbacks once committed, in order, isolating their errors", async () => {
    const { db, queue, errors } = await setup();
    for (let n = 0; n < 3; n++) await queue.enqueue(db, "writes", "write", { n });
    const calls: Array<{ n: number; status: unknown }> = [];
    queue.process(OWNER, "writes", async (job, trx) => {
      await insertEffect(trx, job);
      const n = (job.payload as { n: number }).n;
      return async () => {
        const row = await db.selectFrom("_vellum_jobs").select("status").where("id", "=", job.id).executeTakeFirst();
        calls.push({ n, status: row?.status });
        if (n === 1) throw new Error("hook failed");
      };
    });
    queue.start();
    await waitFor(() => calls.length === 3);
    expect(calls).toEqual([
      { n: 0, status: "applied" },
      { n: 1, status: "applied" },
      { n: 2, status: "applied" },
    ]);
    expect(errors).toEqual([
      { error: expect.objectContaining({ message: "hook failed" }), queue: "writes", jobId: expect.any(String) },
    ]);
  });

  it("stop waits for the batch in progress, then no handler runs; stopping twice is safe", async () => {
    const { db, queue } = await setup();
    const entered = deferred();
    const release = deferred();
    const handled: number[] = [];
    queue.process(OWNER, "writes", async (job, trx) => {
      entered.resolve();
      await release.promise;
      await insertEffect(trx, job);
      handled.push((job.payload as { n: number }).n);
    });
    queue.start();
    await queue.enqueue(db, "writes", "write", { n: 1 });
    await entered.promise;
    let stopped = false;
    const stopping = queue.stop().then(() => {
      stopped = true;
    });
    await sleep(30);
    expect(stopped).toBe(false);
    release.resolve();
    await stopping;
    expect(handled).toEqual([1]);
    await queue.stop();
    const later = await queue.enqueue(db, "writes", "write", { n: 2 });
    await sleep(50);
    expect(handled).toEqual([1]);
    expect(await queue.get(later.id)).toMatchObject({ status: "queued" });
  });

  it("refuses a second handler for the same queue", async () => {
    const { queue } = await setup();
    queue.process(OWNER, "writes", async () => {});
    expect(() => queue.process(OWNER, "writes", async () => {})).toThrow(VellumError);
    expect(() => queue.process(OWNER, "writes", async () => {})).toThrow(/writes/);
  });

  it("counts queued and dead-letter jobs per queue", async () => {
    const { db, queue } = await setup();
    for (let n = 0; n < 3; n++) await queue.enqueue(db, "idle", "write", { n });
    const dead = await queue.enqueue(db, "dead", "write", {});
    const done = await queue.enqueue(db, "done", "write", {});
    queue.process(OWNER, "dead", async () => Promise.reject(new Error("no")), { maxAttempts: 1 });
    queue.process(OWNER, "done", async () => {});
    queue.start();
    await waitFor(async () => (await queue.get(dead.id))?.status === "failed");
    await waitFor(async () => (await queue.get(done.id))?.status === "applied");
    expect(await queue.stats()).toEqual([
      { queue: "dead", queued: 0, failed: 1 },
      { queue: "idle", queued: 3, failed: 0 },
    ]);
  });

  it("prunes only applied jobs older than the cutoff", async () => {
    const { db, queue } = await setup();
    const jobs: JobRecord[] = [];
    for (let n = 0; n < 4; n++) jobs.push(await queue.enqueue(db, "writes", "write", { n }));
    const dead = await queue.enqueue(db, "dead", "write", {});
    queue.process(OWNER, "writes", async () => {});
    queue.process(OWNER, "dead", async () => Promise.reject(new Error("no")), { maxAttempts: 1 });
    queue.start();
    await waitFor(async () => (await queue.stats()).every((row) => row.queued === 0));
    const old = new Date(Date.now() - 2 * 3_600_000).toISOString();
    await db
      .updateTable("_vellum_jobs")
      .set({ updated_at: old })
      .where("id", "in", [jobs[0]?.id, jobs[1]?.id, dead.id])
      .execute();
    expect(await queue.prune(3_600_000)).toBe(2);
    expect(await queue.get(jobs[0]?.id as string)).toBeUndefined();
    expect(await queue.get(jobs[2]?.id as string)).toMatchObject({ status: "applied" });
    expect(await queue.get(dead.id)).toMatchObject({ status: "failed" });
  });

  it("clears an applied job's payload unless the queue keeps it; dead-letter jobs keep theirs for replay", async () => {
    const { db, queue } = await setup();
    const cleared = await queue.enqueue(db, "writes", "write", { body: "x".repeat(2000) });
    const kept = await queue.enqueue(db, "deliveries", "deliver", { url: "https://example.com/hook" });
    const dead = await queue.enqueue(db, "dead", "write", { n: 1 });
    queue.process(OWNER, "writes", async () => {});
    queue.process(OWNER, "deliveries", async () => {}, { mode: "at-least-once", keepAppliedPayload: true });
    queue.process(OWNER, "dead", async () => Promise.reject(new Error("no")), { maxAttempts: 1 });
    queue.start();
    await waitFor(async () => (await queue.stats()).every((row) => row.queued === 0));
    expect(await queue.get(cleared.id)).toMatchObject({ status: "applied", payload: null });
    expect(await queue.get(kept.id)).toMatchObject({ status: "applied", payload: { url: "https://example.com/hook" } });
    expect(await queue.get(dead.id)).toMatchObject({ status: "failed", payload: { n: 1 } });
  });

  it("resumes pending jobs when a new JobQueue opens the same database file", async () => {
    const path = await tempPath();
    const first = newQueue(await openDb(path));
    const firstDb = databases[0] as VellumDatabase;
    for (let n = 0; n < 20; n++) await first.queue.enqueue(firstDb.kysely, "writes", "write", { n });
    await firstDb.close();

    const db = await openDb(path);
    const { queue } = newQueue(db);
    queue.process(OWNER, "writes", async (job, trx) => insertEffect(trx, job));
    queue.start();
    await waitFor(async () => (await queue.stats()).length === 0);
    expect(await effectValues(db)).toEqual(Array.from({ length: 20 }, (_, n) => ({ n })));
  });

  it("backs off exponentially from about a second with jitter and a cap", () => {
    for (let i = 0; i < 50; i++) {
      const first = defaultBackoffMs(1);
      expect(first).toBeGreaterThanOrEqual(750);
      expect(first).toBeLessThanOrEqual(1250);
      const third = defaultBackoffMs(3);
      expect(third).toBeGreaterThanOrEqual(3000);
      expect(third).toBeLessThanOrEqual(5000);
      expect(defaultBackoffMs(40)).toBeLessThanOrEqual(375_000);
    }
  });
});

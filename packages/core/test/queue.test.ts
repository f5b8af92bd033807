import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { collectForCommit } from "../src/db/write.js";
import { VellumError } from "../src/errors/vellum-error.js";
import type { JobRecord } from "../src/queue/types.js";
import { defaultBackoffMs } from "../src/queue/job-error.js";
import { ageJob } from "./helpers/age-job.js";
import { type AnyDb, type AnyTransaction, TEST_OWNER } from "./helpers/job-queue.js";
import { effectValues, insertEffect, queueTestbed } from "./helpers/queue-testbed.js";
import { deferred, sleep, waitFor } from "./helpers/wait.js";

const { setup, tempPath, open, newQueue } = queueTestbed();

describe("JobQueue", () => {
  it("applies the jobs of a queue in enqueue order, including jobs enqueued while it runs", async () => {
    const { db, queue, errors, process } = await setup();
    const seen: number[] = [];
    for (let n = 0; n < 30; n++) await queue.enqueue(db, "writes", "write", { n });
    process("writes", async (job) => {
      seen.push((job.payload as { n: number }).n);
    });
    queue.start();
    for (let n = 30; n < 60; n++) await queue.enqueue(db, "writes", "write", { n });
    await waitFor(() => seen.length === 60);
    expect(seen).toEqual(Array.from({ length: 60 }, (_, n) => n));
    expect(await queue.stats()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("gives jobs monotonic ULIDs and returns the stored record, with its key, from get()", async () => {
    const { db, queue } = await setup();
    const jobs: JobRecord[] = [];
    for (let n = 0; n < 50; n++) jobs.push(await queue.enqueue(db, "q", "t", { n }));
    const ids = jobs.map((job) => job.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(50);
    const stored = await queue.get(ids[3] as string);
    expect(stored).toMatchObject({ id: ids[3], queue: "q", key: null, type: "t", payload: { n: 3 }, status: "queued" });
    expect(stored?.attempts).toBe(0);
    expect(stored?.last_error).toBeNull();
    expect(stored?.error_code).toBeNull();
    const keyed = await queue.enqueue(db, "q", "t", {}, "slug-1");
    expect(await queue.get(keyed.id)).toMatchObject({ id: keyed.id, key: "slug-1", status: "queued" });
    expect(await queue.get("01ARZ3NDEKTSV4RRFFQ69G5FAV")).toBeUndefined();
  });

  it("group-commits pending jobs: many jobs share one transaction", async () => {
    const { db, queue, process } = await setup();
    for (let n = 0; n < 100; n++) await queue.enqueue(db, "writes", "write", { n });
    const transactions = new Map<AnyTransaction, string[]>();
    process(
      "writes",
      async (job, w) => {
        transactions.set(w.trx, [...(transactions.get(w.trx) ?? []), job.id]);
        await insertEffect(w.trx, job);
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
    const { db, queue, process } = await setup();
    const mode = async (executor: AnyDb) =>
      Number((await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(executor)).rows[0]?.synchronous);
    const release = deferred();
    const seen: number[] = [];
    process("writes", async (job, w) => {
      seen.push(await mode(w.trx));
      await insertEffect(w.trx, job);
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
    const { db, queue, process } = await setup();
    await db.schema.createTable("totals").addColumn("sum", "integer").addColumn("items", "integer").execute();
    for (let n = 1; n <= 20; n++) await queue.enqueue(db, "writes", "write", { n });
    const flushes: number[][] = [];
    const addToTotals = async (trx: AnyDb, items: number[]) => {
      flushes.push(items);
      const sum = items.reduce((a, b) => a + b, 0);
      await trx.insertInto("totals").values({ sum, items: items.length }).execute();
    };
    let failedOnce = false;
    process(
      "writes",
      async (job, w) => {
        const n = (job.payload as { n: number }).n;
        await insertEffect(w.trx, job);
        await collectForCommit(w.trx, "totals", n, addToTotals);
        if (n === 15 && !failedOnce) {
          failedOnce = true;
          throw new Error("job 15 fails once, after collecting");
        }
      },
      { batchSize: 20, backoffMs: () => 0 },
    );
    queue.start();
    await waitFor(async () => (await queue.stats()).length === 0);
    // The jobs have no key, so the first batch goes on past job 15: every other job's items are
    // flushed together, none of 15's (rolled back with its savepoint); 15's retry flushes its own.
    expect(flushes).toEqual([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 18, 19, 20], [15]]);
    const totals = await db.selectFrom("totals").selectAll().execute();
    expect(totals).toEqual([
      { sum: 195, items: 19 },
      { sum: 15, items: 1 },
    ]);
    expect(await effectValues(db)).toHaveLength(20);
    // Outside a batch the kernel runs, the flush happens at once with the one item.
    await db.transaction().execute((trx) => collectForCommit(trx, "totals", 7, addToTotals));
    expect(flushes.at(-1)).toEqual([7]);
  });

  it("yields to the event loop between batches so a busy queue never starves timers and I/O", async () => {
    const { db, queue, process } = await setup();
    await db.transaction().execute(async (trx) => {
      for (let n = 0; n < 300; n++) await queue.enqueue(trx, "writes", "write", { n });
    });
    let handled = 0;
    process(
      "writes",
      async (job, w) => {
        await insertEffect(w.trx, job);
        handled++;
      },
      { batchSize: 1 },
    );
    queue.start();
    const handledWhenTimerFired = await new Promise<number>((resolve) => setTimeout(() => resolve(handled), 0));
    expect(handledWhenTimerFired).toBeLessThan(300);
    await waitFor(() => handled === 300);
  });

  it("rolls a failing job back to its savepoint, commits the jobs before it and retries it before its key's later jobs", async () => {
    const { db, queue, process } = await setup();
    for (let n = 0; n < 10; n++) await queue.enqueue(db, "writes", "write", { n }, "doc");
    let failedOnce = false;
    const batches = new Map<AnyTransaction, number[]>();
    process(
      "writes",
      async (job, w) => {
        const n = (job.payload as { n: number }).n;
        batches.set(w.trx, [...(batches.get(w.trx) ?? []), n]);
        await insertEffect(w.trx, job);
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
    const jobs = await db
      .selectFrom("_vellum_jobs")
      .select(["attempts", "last_error", "error_code"])
      .orderBy("id")
      .execute();
    expect(jobs[4]).toEqual({ attempts: 1, last_error: "transient", error_code: "internal_error" });
  });

  it("retries with backoff, dead-letters after maxAttempts, holds back only its own key, and replays", async () => {
    const { db, queue, errors, process } = await setup();
    let healthy = false;
    const attemptsAt: number[] = [];
    const applied: string[] = [];
    process(
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
    process("b", async (job) => {
      applied.push(`b:${(job.payload as { n: number }).n}`);
    });
    queue.start();
    const poison = await queue.enqueue(db, "a", "poison", {}, "doc");
    await queue.enqueue(db, "a", "after", {}, "doc");
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
    expect(await queue.replay("a", { ids: [] })).toBe(0);
    expect(await queue.replay("a", { ids: [poison.id] })).toBe(1);
    await waitFor(() => applied.includes("a:poison"));
    expect(await queue.get(poison.id)).toMatchObject({ status: "applied", attempts: 0, last_error: null });
    expect(await queue.replay()).toBe(0);
  });

  it("leaves out, quietly, a job of its batch that a request applied between the batch's read and its write", async () => {
    const database = await open(await tempPath());
    const db = database.kysely;
    let early: JobRecord | undefined;
    const { queue, errors, reported, process } = newQueue(database, {
      // A read of a just-created slug applies its create ahead of the worker (`applyNow`), once.
      beforeWrite: async () => {
        const job = early;
        early = undefined;
        if (job) expect(await queue.applyNow("writes", job.id)).toBe(true);
      },
    });
    process("writes", (job, w) => insertEffect(w.trx, job));
    early = await queue.enqueue(db, "writes", "write", { n: 0 });
    await queue.enqueue(db, "writes", "write", { n: 1 });
    queue.start();
    await waitFor(async () => (await queue.stats()).length === 0);
    expect(early).toBeUndefined();
    expect(await effectValues(db)).toEqual([{ n: 0 }, { n: 1 }]);
    expect(errors).toEqual([]);
    expect(reported).toEqual([]);
  });

  it("leaves no job behind when the enqueuing transaction rolls back", async () => {
    const { db, queue, process } = await setup();
    const handled: string[] = [];
    process("writes", async (job, w) => {
      handled.push(job.id);
      await insertEffect(w.trx, job);
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
    const { db, queue, process } = await setup();
    const release = deferred();
    const deliveries: Array<{ args: number; statusDuringDelivery: unknown }> = [];
    let calls = 0;
    process(
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
    process("writes", async (job, w) => insertEffect(w.trx, job));
    queue.start();
    const hook = await queue.enqueue(db, "hooks", "deliver", {});
    await waitFor(() => deliveries.length === 2);
    for (let n = 0; n < 5; n++) await queue.enqueue(db, "writes", "write", { n });
    await waitFor(async () => (await effectValues(db)).length === 5);
    expect(await queue.get(hook.id)).toMatchObject({ status: "queued", attempts: 1, last_error: "receiver down" });
    release.resolve();
    await waitFor(async () => (await queue.get(hook.id))?.status === "applied");
    expect(deliveries).toEqual([
      { args: 2, statusDuringDelivery: "queued" },
      { args: 2, statusDuringDelivery: "queued" },
    ]);
  });

  it("runs after-commit work once committed, in order, isolating its errors; never a failed attempt's", async () => {
    const { db, queue, errors, reported, process } = await setup();
    for (let n = 0; n < 3; n++) await queue.enqueue(db, "writes", "write", { n });
    const calls: Array<{ n: number; status: unknown }> = [];
    let failedOnce = false;
    process(
      "writes",
      async (job, w) => {
        await insertEffect(w.trx, job);
        const n = (job.payload as { n: number }).n;
        w.afterCommit(async () => {
          const row = await db.selectFrom("_vellum_jobs").select("status").where("id", "=", job.id).executeTakeFirst();
          calls.push({ n, status: row?.status });
          if (n === 1) throw new Error("hook failed");
        });
        if (n === 2 && !failedOnce) {
          failedOnce = true;
          throw new Error("job 2 fails once, after deferring its work");
        }
      },
      { backoffMs: () => 0 },
    );
    queue.start();
    await waitFor(() => calls.length === 3);
    await waitFor(async () => (await queue.stats()).length === 0);
    expect(calls).toEqual([
      { n: 0, status: "applied" },
      { n: 1, status: "applied" },
      { n: 2, status: "applied" },
    ]);
    expect(errors).toEqual([]);
    expect(reported).toEqual([
      {
        error: expect.objectContaining({ message: "hook failed" }),
        plugin: TEST_OWNER,
        tags: { step: "after-commit" },
      },
    ]);
  });

  it("stop waits for the batch in progress, then no handler runs; stopping twice is safe", async () => {
    const { db, queue, process } = await setup();
    const entered = deferred();
    const release = deferred();
    const handled: number[] = [];
    process("writes", async (job, w) => {
      entered.resolve();
      await release.promise;
      await insertEffect(w.trx, job);
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
    queue.process(TEST_OWNER, "writes", async () => {});
    expect(() => queue.process(TEST_OWNER, "writes", async () => {})).toThrow(VellumError);
    expect(() => queue.process("another", "writes", async () => {})).toThrow(/writes/);
  });

  it("counts queued and dead-letter jobs per queue", async () => {
    const { db, queue, process } = await setup();
    for (let n = 0; n < 3; n++) await queue.enqueue(db, "idle", "write", { n });
    const dead = await queue.enqueue(db, "dead", "write", {});
    const done = await queue.enqueue(db, "done", "write", {});
    process("dead", async () => Promise.reject(new Error("no")), { maxAttempts: 1 });
    process("done", async () => {});
    queue.start();
    await waitFor(async () => (await queue.get(dead.id))?.status === "failed");
    await waitFor(async () => (await queue.get(done.id))?.status === "applied");
    expect(await queue.stats()).toEqual([
      { queue: "dead", queued: 0, failed: 1 },
      { queue: "idle", queued: 3, failed: 0 },
    ]);
  });

  it("prunes only applied jobs older than the cutoff", async () => {
    const { db, queue, process } = await setup();
    const jobs: JobRecord[] = [];
    for (let n = 0; n < 4; n++) jobs.push(await queue.enqueue(db, "writes", "write", { n }));
    const dead = await queue.enqueue(db, "dead", "write", {});
    process("writes", async () => {});
    process("dead", async () => Promise.reject(new Error("no")), { maxAttempts: 1 });
    queue.start();
    await waitFor(async () => (await queue.stats()).every((row) => row.queued === 0));
    const [first, second] = await Promise.all(
      [jobs[0], jobs[1]].map((job) => ageJob(db, job?.id as string, 2 * 3_600_000)),
    );
    const oldDead = await ageJob(db, dead.id, 2 * 3_600_000);
    expect(await queue.prune(3_600_000)).toBe(2);
    expect(await queue.get(first as string)).toBeUndefined();
    expect(await queue.get(second as string)).toBeUndefined();
    expect(await queue.get(jobs[2]?.id as string)).toMatchObject({ status: "applied" });
    expect(await queue.get(oldDead)).toMatchObject({ status: "failed" });
  });

  it("clears an applied job's payload, or keeps what a delivery resolved to; dead-letter jobs keep theirs for replay", async () => {
    const { db, queue, process } = await setup();
    const cleared = await queue.enqueue(db, "writes", "write", { body: "x".repeat(2000) });
    const delivered = await queue.enqueue(db, "deliveries", "deliver", { url: "https://example.com/hook" });
    const dead = await queue.enqueue(db, "dead", "write", { n: 1 });
    process("writes", async () => {});
    process("deliveries", async () => ({ status: 204 }), { mode: "at-least-once" });
    process("dead", async () => Promise.reject(new Error("no")), { maxAttempts: 1 });
    queue.start();
    await waitFor(async () => (await queue.stats()).every((row) => row.queued === 0));
    expect(await queue.get(cleared.id)).toMatchObject({ status: "applied", payload: null });
    expect(await queue.get(delivered.id)).toMatchObject({ status: "applied", payload: { status: 204 } });
    expect(await queue.get(dead.id)).toMatchObject({ status: "failed", payload: { n: 1 } });
  });

  it("resumes pending jobs when a new JobQueue opens the same database file", async () => {
    const path = await tempPath();
    const firstDb = await open(path);
    const first = newQueue(firstDb);
    for (let n = 0; n < 20; n++) await first.queue.enqueue(firstDb.kysely, "writes", "write", { n });
    await firstDb.close();

    const database = await open(path);
    const db = database.kysely;
    const { queue, process } = newQueue(database);
    process("writes", async (job, w) => insertEffect(w.trx, job));
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

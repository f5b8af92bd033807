import { describe, expect, it } from "vitest";
import { collectForCommit } from "../src/db/write.js";
import type { JobRecord } from "../src/queue/types.js";
import type { AnyTransaction } from "./helpers/job-queue.js";
import { effectValues, insertEffect, queueTestbed } from "./helpers/queue-testbed.js";
import { waitFor } from "./helpers/wait.js";

const { setup } = queueTestbed();

/** A long backoff: a job that failed stays waiting for its retry for the whole test. */
const LONG_BACKOFF = () => 60_000;

/** `<key>:<type>`, how the tests name a job in the logs they keep. */
const label = (job: JobRecord) => `${job.key ?? "-"}:${job.type}`;

describe("job order per key", () => {
  it("a poisoned job delays no other key; the later jobs of its key wait until it succeeds", async () => {
    const { db, queue, process } = await setup();
    let healthy = false;
    const log: string[] = [];
    process(
      "docs",
      async (job, w) => {
        if (job.type === "poison" && !healthy) {
          log.push(`failed ${label(job)}`);
          throw new Error("poisoned");
        }
        await insertEffect(w.trx, job);
        log.push(`applied ${label(job)}`);
      },
      { backoffMs: LONG_BACKOFF, pollMs: 20 },
    );
    queue.start();
    const poison = await queue.enqueue(db, "docs", "poison", { n: 0 }, "A");
    await waitFor(() => log.includes("failed A:poison"));

    const later = await queue.enqueue(db, "docs", "later", { n: 1 }, "A");
    for (let n = 2; n <= 4; n++) await queue.enqueue(db, "docs", `write${n}`, { n }, "B");
    await waitFor(() => log.filter((line) => line.startsWith("applied B:")).length === 3);
    expect(log).toEqual(["failed A:poison", "applied B:write2", "applied B:write3", "applied B:write4"]);
    expect(await queue.get(poison.id)).toMatchObject({ status: "queued", attempts: 1 });
    // Never tried: held back behind the retry of its key.
    expect(await queue.get(later.id)).toMatchObject({ status: "queued", attempts: 0 });

    healthy = true;
    expect(await queue.applyNow("docs", poison.id)).toBe(true);
    await waitFor(() => log.includes("applied A:later"));
    expect(log.slice(4)).toEqual(["applied A:poison", "applied A:later"]);
    expect(await effectValues(db)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  });

  it("within a batch a failing job skips only its key's later jobs, which follow once it is dead-lettered", async () => {
    const { db, queue, errors, process } = await setup();
    const batches = new Map<AnyTransaction, string[]>();
    const poison = await queue.enqueue(db, "docs", "poison", {}, "A");
    const later = await queue.enqueue(db, "docs", "later", {}, "A");
    await queue.enqueue(db, "docs", "other", {}, "B");
    process(
      "docs",
      async (job, w) => {
        batches.set(w.trx, [...(batches.get(w.trx) ?? []), label(job)]);
        if (job.type === "poison") throw new Error("poisoned");
      },
      { maxAttempts: 1 },
    );
    queue.start();
    await waitFor(async () => (await queue.get(later.id))?.status === "applied");
    expect([...batches.values()]).toEqual([["A:poison", "B:other"], ["A:later"]]);
    expect(await queue.get(poison.id)).toMatchObject({ status: "failed", attempts: 1 });
    expect(errors).toEqual([expect.objectContaining({ queue: "docs", jobId: poison.id })]);
  });

  it("a job that succeeds on its retry is applied before the later jobs of its key", async () => {
    const { db, queue, process } = await setup();
    const batches = new Map<AnyTransaction, string[]>();
    let failures = 0;
    for (const [type, key] of [
      ["first", "A"],
      ["second", "A"],
      ["other", "B"],
      ["third", "A"],
    ] as const) {
      await queue.enqueue(db, "docs", type, {}, key);
    }
    process(
      "docs",
      async (job, w) => {
        batches.set(w.trx, [...(batches.get(w.trx) ?? []), label(job)]);
        if (job.type === "first" && failures++ === 0) throw new Error("transient");
      },
      { backoffMs: () => 0 },
    );
    queue.start();
    await waitFor(async () => (await queue.stats()).length === 0);
    expect([...batches.values()]).toEqual([
      ["A:first", "B:other"],
      ["A:first", "A:second", "A:third"],
    ]);
  });

  it("a required flush that fails fails its batch, which is applied again a job at a time: only that job's key waits", async () => {
    const { db, queue, errors, process } = await setup();
    const jobs = [];
    for (const [type, key] of [
      ["bad", "A"],
      ["after-bad", "A"],
      ["good", "B"],
      ["also-good", "C"],
    ] as const) {
      jobs.push(await queue.enqueue(db, "docs", type, { type }, key));
    }
    const [bad, afterBad] = jobs;
    const flushed: string[][] = [];
    process(
      "docs",
      async (job, w) => {
        await insertEffect(w.trx, job);
        await collectForCommit(
          w.trx,
          "docs:outbox",
          job.type,
          async (_trx, types: string[]) => {
            if (types.includes("bad")) throw new Error("the outbox refuses 'bad'");
            flushed.push(types);
          },
          { required: true },
        );
      },
      { backoffMs: LONG_BACKOFF, maxAttempts: 2 },
    );
    queue.start();
    await waitFor(async () => (await queue.get(bad!.id))?.attempts === 1);
    await waitFor(async () => (await queue.depth("docs")) === 2);
    // The batch of four failed as a whole; alone, each job commits with its own flush, except 'bad',
    // whose failure is recorded against it (its effect rolled back) and holds back its key.
    expect(flushed).toEqual([["good"], ["also-good"]]);
    expect(await queue.get(bad!.id)).toMatchObject({ status: "queued", attempts: 1, error_code: "internal_error" });
    expect((await queue.get(bad!.id))?.last_error).toBe("the outbox refuses 'bad'");
    expect(await queue.get(afterBad!.id)).toMatchObject({ status: "queued", attempts: 0 });
    expect(await effectValues(db)).toEqual([{ type: "good" }, { type: "also-good" }]);
    expect(errors).toEqual([]);
  });

  it("jobs without a key are not ordered: one waiting for its retry holds back none", async () => {
    const { db, queue, process } = await setup();
    const applied: string[] = [];
    process(
      "docs",
      async (job) => {
        if (job.type === "poison") throw new Error("poisoned");
        applied.push(job.type);
      },
      { backoffMs: LONG_BACKOFF },
    );
    queue.start();
    const poison = await queue.enqueue(db, "docs", "poison", {});
    await waitFor(async () => (await queue.get(poison.id))?.attempts === 1);
    await queue.enqueue(db, "docs", "after", {});
    await waitFor(() => applied.includes("after"));
    expect(await queue.get(poison.id)).toMatchObject({ status: "queued", attempts: 1 });
  });
});
